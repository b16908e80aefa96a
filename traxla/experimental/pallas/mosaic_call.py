"""The compiled path of ``pallas_call`` (no ``interpret=True``): the kernel is traced once
to a jaxpr over refs (the grid indices first, then a ref per scalar-prefetch operand, input
block, output block and scratch buffer), each block spec's index map to a jaxpr from the
grid indices, and the call becomes one ``pallas_call`` equation
(``traxla.ir.rules.pallas``). Lowered for a TPU it is a Mosaic kernel in a
``tpu_custom_call`` (``traxla.lowering.rules.pallas``); lowered for the CPU it raises
JAX's "Only interpret mode is supported on CPU backend.". Under ``vmap`` the call runs once
per batch element (each a ``pallas_call``)."""
from __future__ import annotations

import contextlib
import functools
import inspect
import re
import threading

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.effects import has_effects
from traxla.state import ref_chain
from traxla.ir.jaxpr import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, has_subjaxprs,
                              name_stack, subjaxprs)
from traxla.ir.rules.call import closed_call_p
from traxla.ir.rules.pallas import BlockMapping, KernelSpec, pallas_call_p
from traxla.ir.rules.refs import AbstractRef
from traxla.experimental.pallas.mosaic_memory import scratch_alloc
from traxla.tracer.staging import source_info_of_function, trace_to_jaxpr
from traxla.tracer.traces import _internal_files, user_source_info
import traxla.numpy as jnp

_I32 = ShapedArray((), np.dtype(np.int32))


class _Tracing(threading.local):
    depth = 0


_tracing = _Tracing()


def in_compiled_kernel() -> bool:
    """Whether a compiled kernel is being traced now (its TPU operations then become
    equations of their own, which only the Mosaic lowering has rules for)."""
    return _tracing.depth > 0


class _Grid(tuple):
    """The grid indices (or sizes) a compiled kernel sees: an axis out of range is JAX's
    error, not an IndexError."""

    def __getitem__(self, axis):
        if isinstance(axis, int) and not -len(self) <= axis < len(self):
            if not self:
                raise ValueError(f"program id: {axis} was passed, but user did not provide "
                                 "a grid.")
            raise ValueError(f"user passed in program id with axis: {axis}, but grid only "
                             f"has length: {len(self)}")
        return tuple.__getitem__(self, axis)


def _user_line(tb) -> str | None:
    """The innermost frame of a traceback in the user's code (the kernel's line that
    failed while it was traced): ``file:line (function)``."""
    where = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _internal_files[code.co_filename]:
            where = f"{code.co_filename}:{tb.tb_lineno} ({code.co_name})"
        tb = tb.tb_next
    return where


def _space_name(space) -> str | None:
    if space is None:
        return None
    value = getattr(space, "value", space)
    return {"vmem": "vmem", "smem": "smem", "any": "any", "hbm": "hbm",
            "default": None, "semaphore_mem": "semaphore_mem"}.get(str(value), str(value))


def _aval(x) -> ShapedArray:
    return ShapedArray(tuple(x.shape), dtypes.canonicalize(np.dtype(x.dtype)))


@contextlib.contextmanager
def _fresh_name_stack():
    """The kernel and its index maps are traced under no named scope (JAX's
    ``trace_to_jaxpr`` resets the name stack): the scopes around the call stay out of the
    kernel's ``tpu.trace_start`` regions."""
    prev, name_stack.scopes = name_stack.scopes, ()
    try:
        yield
    finally:
        name_stack.scopes = prev


def _must_keep(eqn) -> bool:
    """Whether dead-code elimination keeps ``eqn`` although nothing reads its results: it
    writes a ref or has another effect (JAX drops reads, whose effect is DCE-able), or has
    no results at all (a TPU operation run for its effect); control flow when its body
    holds such an equation."""
    if has_subjaxprs(eqn.params):
        return any(_must_keep(e) for j in subjaxprs(eqn.params) for e in j.eqns)
    if eqn.primitive.name == "get":
        return False
    return not eqn.outvars or has_effects(eqn)


def _dce_kernel(jaxpr):
    """JAX's ``pe.dce_jaxpr`` of the kernel's jaxpr (its inputs and outputs kept): the
    equations whose results nothing reads and that have no effect go (e.g. a ``pl.when``
    with nothing left to do, a ``select`` only it read, a read only for a shape), inside
    control flow too; a ``cond`` also loses the operands and results its branches no
    longer use (JAX's rule for ``cond``)."""
    used = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in used for v in eqn.outvars) or _must_keep(eqn):
            eqn = _dce_inside(eqn, used)
            eqns.append(eqn)
            used.update(v for v in eqn.invars if not isinstance(v, Literal))
    if len(eqns) == len(jaxpr.eqns) and all(e is f for e, f in zip(eqns[::-1], jaxpr.eqns)):
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns[::-1], jaxpr.debug_info)


def _closed(closed, jaxpr):
    return closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)


def _reads(jaxpr) -> set:
    read = {v for e in jaxpr.eqns for v in e.invars if not isinstance(v, Literal)}
    return read | {v for v in jaxpr.outvars if not isinstance(v, Literal)}


def _keep(xs, mask):
    return [x for x, k in zip(xs, mask) if k]


# JAX's DCE has no rule for these: it keeps such an equation whole, its bodies untouched
_NO_DCE_RULE = frozenset({"while", "run_scoped"})


def _dce_inside(eqn, used):
    """``eqn`` with the dead code of its sub-jaxprs gone (``used``: what is read after it)
    and, as JAX's DCE rules do, the operands they no longer read: a call's (and its unused
    results), a cond's (and its unused results), a loop's constants."""
    name, params = eqn.primitive.name, eqn.params
    if not has_subjaxprs(params) or name in _NO_DCE_RULE:
        return eqn
    if name == "cond":
        return _dce_cond(eqn, used)
    if name in ("jit", "pjit", "closed_call", "core_call"):
        key = "jaxpr" if "jaxpr" in params else "call_jaxpr"
        closed = params[key]
        inner = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
        keep_out = [v in used for v in eqn.outvars]
        inner = _dce_kernel(Jaxpr(inner.constvars, inner.invars, _keep(inner.outvars, keep_out),
                                  inner.eqns, inner.debug_info))
        keep_in = [v in _reads(inner) for v in inner.invars]
        inner = Jaxpr(inner.constvars, _keep(inner.invars, keep_in), inner.outvars,
                      inner.eqns, inner.debug_info)
        new = ClosedJaxpr(inner, closed.consts) if isinstance(closed, ClosedJaxpr) else inner
        return eqn.replace(invars=_keep(eqn.invars, keep_in),
                           outvars=_keep(eqn.outvars, keep_out), params={**params, key: new})
    if name == "scan":  # (its constants nothing reads go)
        closed, n = params["jaxpr"], params["num_consts"]
        inner = _dce_kernel(closed.jaxpr)
        keep = [i >= n or v in _reads(inner) for i, v in enumerate(inner.invars)]
        inner = Jaxpr(inner.constvars, _keep(inner.invars, keep), inner.outvars, inner.eqns,
                      inner.debug_info)
        linear = params.get("linear")
        return eqn.replace(invars=_keep(eqn.invars, keep), params={
            **params, "jaxpr": ClosedJaxpr(inner, closed.consts), "num_consts": sum(keep[:n]),
            **({"linear": tuple(_keep(linear, keep))} if linear is not None else {})})
    params = {k: (_closed(v, _dce_kernel(v.jaxpr)) if isinstance(v, ClosedJaxpr) else
                  _dce_kernel(v) if isinstance(v, Jaxpr) else v)
              for k, v in params.items()}  # (while: its signature kept)
    changed = any(params[k] is not eqn.params[k] for k in params)
    return eqn.replace(params=params) if changed else eqn


def _dce_cond(eqn, used):
    branches = eqn.params["branches"]
    keep_out = [v in used for v in eqn.outvars]
    pruned = [_dce_kernel(Jaxpr(b.jaxpr.constvars, b.jaxpr.invars,
                                _keep(b.jaxpr.outvars, keep_out), b.jaxpr.eqns,
                                b.jaxpr.debug_info)) for b in branches]
    reads = [_reads(j) for j in pruned]
    keep_in = [any(j.invars[i] in r for j, r in zip(pruned, reads))
               for i in range(len(eqn.invars) - 1)]
    pruned = [ClosedJaxpr(Jaxpr(j.constvars, _keep(j.invars, keep_in), j.outvars, j.eqns,
                                j.debug_info), b.consts) for j, b in zip(pruned, branches)]
    return eqn.replace(invars=[eqn.invars[0], *_keep(eqn.invars[1:], keep_in)],
                       outvars=_keep(eqn.outvars, keep_out),
                       params={**eqn.params, "branches": tuple(pruned)})


# Operations Mosaic has no instruction for, computed as JAX's Pallas TPU lowering computes
# them (its rules lower a function of other operations: `lower_fun`): each equation becomes
# a call of that function's jaxpr, which the Mosaic lowering inlines.

def _sign(x):
    """JAX's TPU rule: for floats, 1.0 with x's sign bit where |x| > 0, else x itself (NaN
    and signed zeros pass); bf16 stays bf16 (the TPU's native bf16, v4 and later)."""
    from traxla import lax
    dtype = np.dtype(x.dtype)
    if dtypes.is_float(dtype):
        bits, uint, one = ((16, np.uint16, 0x3F80) if dtype == dtypes.bfloat16
                           else (32, np.uint32, 0x3F800000))
        wide = x if bits == 16 else x.astype(np.float32)
        sign_bit = lax.bitwise_and(lax.bitcast_convert_type(wide, uint),
                                   uint(1 << (bits - 1)))
        value = lax.bitcast_convert_type(lax.bitwise_or(uint(one), sign_bit), wide.dtype)
        out = jnp.where(jnp.abs(wide) > 0.0, value, wide)
        return out if bits == 16 else out.astype(dtype)
    if np.issubdtype(dtype, np.signedinteger):
        return (x > 0).astype(dtype) - (x < 0).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return (x != 0).astype(dtype)
    raise ValueError(f"Unsupported dtype for sign: {dtype}")


# Giles' single-precision erfinv (XLA's ErfInv32): a degree-8 polynomial in
# w = -log(1 - x^2), one for w < 5 (about w - 2.5) and one beyond (about sqrt(w) - 3)
_ERF_INV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _erf_inv(x):
    if np.dtype(x.dtype) != np.float32:
        raise NotImplementedError(f"erf_inv of {x.dtype} in a Mosaic kernel (float32 only)")
    w = -jnp.log1p(x * -x)
    central = w < 5.0
    w = jnp.where(central, w - 2.5, jnp.sqrt(w) - 3.0)
    p = jnp.where(central, _ERF_INV_CENTRAL[0], _ERF_INV_TAIL[0])
    for a, b in zip(_ERF_INV_CENTRAL[1:], _ERF_INV_TAIL[1:]):
        p = jnp.where(central, a, b) + p * w
    return jnp.where(jnp.abs(x) == 1.0, jnp.inf * x, p * x)


_EXPANSIONS = {"sign": _sign, "erf_inv": _erf_inv}


def _expand(jaxpr):
    """``jaxpr`` with each operation of ``_EXPANSIONS`` (inside control flow too) a
    ``closed_call`` of its function's jaxpr."""
    eqns, changed = [], False
    for eqn in jaxpr.eqns:
        fn = _EXPANSIONS.get(eqn.primitive.name)
        if fn is not None:
            avals = [v.aval for v in eqn.invars]
            inner = trace_to_jaxpr(lambda *xs: [fn(*xs)], avals)
            assert not inner.consts, eqn.primitive.name  # (the functions close over none)
            eqn = JaxprEqn(eqn.invars, eqn.outvars, closed_call_p, {"call_jaxpr": inner},
                           eqn.source_info)
            changed = True
        elif has_subjaxprs(eqn.params):
            params = {k: (_closed(v, _expand(v.jaxpr)) if isinstance(v, ClosedJaxpr) else
                          _expand(v) if isinstance(v, Jaxpr) else
                          tuple(_closed(b, _expand(b.jaxpr)) for b in v)
                          if type(v) is tuple and v and all(isinstance(b, ClosedJaxpr)
                                                            for b in v) else v)
                      for k, v in eqn.params.items()}
            if any(params[k] is not eqn.params[k] for k in params):
                eqn, changed = eqn.replace(params=params), True
        eqns.append(eqn)
    if not changed:
        return jaxpr
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns, jaxpr.debug_info)


def _index_map_jaxpr(kname, origin, spec, aval, grid, prefetch_avals):
    rank = len(aval.shape)
    index_map = None if spec is None else spec.index_map
    prefetch_avals, prefetch_tree = prefetch_avals  # (the scalar prefetch's structure)
    prefetch_refs = [AbstractRef(a, "smem") for a in prefetch_avals]
    ngrid = len(grid)

    def fn(*args):
        if index_map is None:
            return [jnp.int32(0)] * rank
        # (the index map sees the scalar prefetch arguments as passed: None stays None)
        out = index_map(*args[:ngrid], *tree_util.tree_unflatten(prefetch_tree,
                                                                  args[ngrid:]))
        if not isinstance(out, tuple):
            out = (out,)
        if len(out) != rank:
            raise ValueError(
                f"Pallas kernel `{kname}`: the index map "
                f"{source_info_of_function(getattr(index_map, 'index_map', index_map))} of "
                f"the block spec for {origin} "
                f"returned {len(out)} indices for an array of rank {rank} (shape "
                f"{aval.shape}); it must return one index per dimension.")
        return [jnp.asarray(o, np.int32) if not hasattr(o, "aval") else o for o in out]

    with _fresh_name_stack():
        return trace_to_jaxpr(fn, [_I32] * len(grid) + prefetch_refs)


def _block(kname, origin, spec, aval, grid, prefetch_avals, no_block_spec, squeezed_type):
    if spec is no_block_spec or spec is None:
        spec = None
        block_shape = tuple(aval.shape)
        space = None
    else:
        block_shape = tuple(aval.shape) if spec.block_shape is None else tuple(spec.block_shape)
        space = _space_name(spec.memory_space)
    if len(block_shape) != len(aval.shape):
        raise ValueError(f"Pallas kernel `{kname}`: block shape {block_shape} for {origin} "
                         f"must have the same number of dimensions as the array shape "
                         f"{tuple(aval.shape)}.")
    # ``pl.Blocked(n)`` is the default kind of block dimension: the size ``n`` itself.
    block_shape = tuple(b.block_size if type(b).__name__ == "Blocked" else b
                        for b in block_shape)
    squeezed = tuple(b is None or isinstance(b, squeezed_type) for b in block_shape)
    if any(not s and not isinstance(b, (int, np.integer)) for s, b in zip(squeezed,
                                                                           block_shape)):
        raise NotImplementedError(
            f"Pallas kernel `{kname}`: block dimensions other than sizes and None "
            f"(block shape {block_shape} for {origin}) are not implemented by traxla's "
            "Mosaic lowering")
    block_shape = tuple(1 if s else int(b) for s, b in zip(squeezed, block_shape))
    index_map = _index_map_jaxpr(kname, origin, spec, aval, grid, prefetch_avals)
    return BlockMapping(aval, block_shape, space, index_map, origin, squeezed)


_SANITIZE = re.compile(r"[^\w.-]")


def _kernel_name(kernel) -> str:
    """The kernel function's name, through ``functools.partial`` (JAX's fun_sourceinfo)."""
    while isinstance(kernel, functools.partial):
        kernel = kernel.func
    return getattr(inspect.unwrap(kernel), "__name__", "kernel")


def compiled_call(kernel, grid_spec, out_shape, input_output_aliases, compiler_params,
                  name, args, *, no_block_spec, specs_for, grid_point, memory_ref_type,
                  squeezed_type, cost_estimate=None, metadata=None):
    source = user_source_info(3)
    kname = _SANITIZE.sub("_", name) if name else _kernel_name(kernel)
    flat_args, in_tree = tree_util.tree_flatten(args)
    flat_out, out_tree = tree_util.tree_flatten(out_shape)
    nprefetch = grid_spec.num_scalar_prefetch
    # the first ``num_scalar_prefetch`` arguments (pytrees) are the scalar prefetch
    npre = len(tree_util.tree_leaves(tuple(args[:nprefetch])))
    prefetch = [jnp.asarray(x) for x in flat_args[:npre]]
    operands = [jnp.asarray(x) for x in flat_args[npre:]]
    in_specs = specs_for(grid_spec.in_specs, tree_util.tree_structure(tuple(args[nprefetch:])),
                         len(operands), "in_specs")
    out_specs = specs_for(grid_spec.out_specs, tree_util.tree_structure(
        tuple(out_shape) if isinstance(out_shape, list) else out_shape), len(flat_out),
        "out_specs")
    out_spread = isinstance(out_shape, (tuple, list))
    # an axis of traced size is None in the grid; its size is an operand, first (JAX's
    # dynamic grid bounds: an unknown iteration bound in the Mosaic module)
    grid, bounds = [], []
    for g in grid_spec.grid:
        try:
            grid.append(int(g))
        except TypeError:
            if getattr(g, "shape", None) != () or not np.issubdtype(g.dtype, np.integer):
                raise ValueError(f"Pallas kernel `{kname}`: the grid's sizes must be integer "
                                 f"scalars; got {g}") from None
            grid.append(None)
            bounds.append(jnp.asarray(g, np.int32))
    grid = tuple(grid)
    prefetch_avals = [_aval(x) for x in prefetch]
    in_avals = [_aval(x) for x in operands]
    out_avals = [_aval(o) for o in flat_out]
    prefetch_info = (prefetch_avals, tree_util.tree_structure(tuple(args[:nprefetch])))
    in_blocks = [_block(kname, f"inputs[{i}]", s, a, grid, prefetch_info, no_block_spec,
                        squeezed_type)
                 for i, (s, a) in enumerate(zip(in_specs, in_avals))]
    out_blocks = [_block(kname, f"outputs[{i}]", s, a, grid, prefetch_info, no_block_spec,
                        squeezed_type)
                  for i, (s, a) in enumerate(zip(out_specs, out_avals))]
    scratch = []
    scratch_leaves, scratch_tree = tree_util.tree_flatten(
        tuple(grid_spec.scratch_shapes), is_leaf=lambda s: isinstance(s, memory_ref_type))
    for s in scratch_leaves:
        try:  # (space, aval): VMEM/SMEM buffers, DMA and regular semaphores
            scratch.append(scratch_alloc(s))
        except NotImplementedError as e:
            raise NotImplementedError(f"Pallas kernel `{kname}`: {e}") from None
    ref_avals = ([AbstractRef(a, "smem") for a in prefetch_avals]
                 + [AbstractRef(ShapedArray(tuple(n for n, s in zip(b.block_shape, b.squeezed)
                                                  if not s), b.array_aval.dtype), b.memory_space)
                    for b in (*in_blocks, *out_blocks)]
                 + [AbstractRef(a, space) for space, a in scratch])
    ngrid, nin = len(grid), len(operands)

    def body(*xs):
        idx, refs = xs[:ngrid], list(xs[ngrid:])
        pre, ins = refs[:npre], refs[npre:npre + nin]
        outs, scr = refs[npre + nin:npre + nin + len(out_avals)], \
            refs[npre + nin + len(out_avals):]
        _tracing.depth += 1
        ref_chain.keep_links.depth += 1
        try:
            with grid_point(_Grid(idx), _Grid(None if g is None else np.int32(g)
                                                 for g in grid)), \
                    _fresh_name_stack():
                # (the kernel's arguments keep the structure of the inputs, outputs and
                # scratch shapes, one level spread: a None input or output is passed as None)
                out_args = tree_util.tree_unflatten(out_tree, outs)
                kernel(*tree_util.tree_unflatten(in_tree, pre + ins),
                       *(out_args if out_spread else (out_args,)),
                       *tree_util.tree_unflatten(scratch_tree, scr))
        finally:
            _tracing.depth -= 1
            ref_chain.keep_links.depth -= 1
        return []

    try:
        jaxpr = trace_to_jaxpr(body, [_I32] * ngrid + ref_avals)
    except (ValueError, TypeError) as e:
        line = _user_line(e.__traceback__)
        e.add_note(f"(in the Pallas kernel `{kname}`" + (f" at {line}" if line else "")
                   + f", a pallas_call at {source})")
        raise
    if jaxpr.consts:
        raise ValueError(
            f"Pallas kernel `{kname}` captures constants "
            f"{[getattr(c, 'shape', c) for c in jaxpr.consts]}: pass them as inputs "
            "(a Mosaic kernel reads arrays only through its refs).")
    jaxpr = ClosedJaxpr(_dce_kernel(_expand(jaxpr.jaxpr)), jaxpr.consts)
    semantics = getattr(compiler_params, "dimension_semantics", None)
    if semantics is None:
        semantics = ("arbitrary",) * ngrid
    semantics = tuple(str(getattr(s, "value", s)).lower() for s in semantics)
    if len(semantics) != ngrid:
        raise ValueError(f"Pallas kernel `{kname}`: dimension_semantics {semantics} must "
                         f"have one entry per grid dimension (grid {grid}).")
    spec = KernelSpec(
        name=kname, jaxpr=jaxpr, grid=grid, in_blocks=in_blocks, out_blocks=out_blocks,
        num_scalar_prefetch=npre, prefetch_avals=prefetch_avals, scratch_avals=scratch,
        dimension_semantics=semantics,
        vmem_limit_bytes=getattr(compiler_params, "vmem_limit_bytes", None),
        compiler_params=compiler_params, source=source,
        cost_estimate=None if cost_estimate is None else tuple(sorted(
            (f, int(getattr(cost_estimate, f))) for f in (
                "flops", "transcendentals", "bytes_accessed", "remote_bytes_transferred"))),
        metadata=None if metadata is None else tuple(sorted(dict(metadata).items())))
    outs = pallas_call_p.bind(*bounds, *prefetch, *operands, kernel=spec, out_avals=tuple(out_avals),
                              input_output_aliases=tuple(sorted(input_output_aliases.items())))
    return tree_util.tree_unflatten(out_tree, outs)
