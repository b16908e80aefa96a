"""The compiled path of ``pallas_call`` (no ``interpret=True``): the kernel is traced once
to a jaxpr over refs (the grid indices first, then a ref per scalar-prefetch operand, input
block, output block and scratch buffer), each block spec's index map to a jaxpr from the
grid indices, and the call becomes one ``pallas_call`` equation
(``traxla.ir.rules.pallas``). Lowered for a TPU it is a Mosaic kernel in a
``tpu_custom_call`` (``traxla.lowering.rules.pallas``); lowered for the CPU it raises
JAX's "Only interpret mode is supported on CPU backend.". Under ``vmap`` the call runs once
per batch element (each a ``pallas_call``)."""
from __future__ import annotations

import functools

import threading

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
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


def _index_map_jaxpr(kname, origin, spec, aval, grid, prefetch_avals):
    rank = len(aval.shape)
    index_map = None if spec is None else spec.index_map
    prefetch_refs = [AbstractRef(a, "smem") for a in prefetch_avals]

    def fn(*args):
        if index_map is None:
            return [jnp.int32(0)] * rank
        out = index_map(*args)
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


def compiled_call(kernel, grid_spec, out_shape, input_output_aliases, compiler_params,
                  name, args, *, no_block_spec, specs_for, grid_point, memory_ref_type,
                  squeezed_type):
    source = user_source_info(3)
    fn = kernel
    while isinstance(fn, functools.partial) and not hasattr(fn, "__name__"):
        fn = fn.func  # JAX's fun_name: a partial is named by its function
    kname = name or getattr(fn, "__name__", "kernel")
    flat_args, in_tree = tree_util.tree_flatten(args)
    flat_out, out_tree = tree_util.tree_flatten(out_shape)
    nprefetch = grid_spec.num_scalar_prefetch
    prefetch = [jnp.asarray(x) for x in flat_args[:nprefetch]]
    operands = [jnp.asarray(x) for x in flat_args[nprefetch:]]
    # the specs' tree is the operands' (a None operand has a None spec, and no leaves)
    in_specs = specs_for(grid_spec.in_specs, tree_util.tree_structure(tuple(args[nprefetch:])),
                         len(operands), "in_specs")
    out_specs = specs_for(grid_spec.out_specs, out_tree, len(flat_out), "out_specs")
    try:
        grid = tuple(int(g) for g in grid_spec.grid)
    except TypeError:
        raise NotImplementedError(f"Pallas kernel `{kname}`: a grid of traced sizes "
                                  f"({grid_spec.grid}) is not implemented") from None
    prefetch_avals = [_aval(x) for x in prefetch]
    in_avals = [_aval(x) for x in operands]
    out_avals = [_aval(o) for o in flat_out]
    in_blocks = [_block(kname, f"inputs[{i}]", s, a, grid, prefetch_avals, no_block_spec,
                        squeezed_type)
                 for i, (s, a) in enumerate(zip(in_specs, in_avals))]
    out_blocks = [_block(kname, f"outputs[{i}]", s, a, grid, prefetch_avals, no_block_spec,
                        squeezed_type)
                  for i, (s, a) in enumerate(zip(out_specs, out_avals))]
    scratch = []
    # the kernel sees the scratch shapes' structure, one level spread (Nones, tuples)
    scratch_shapes, scratch_tree = tree_util.tree_flatten(
        tuple(grid_spec.scratch_shapes), is_leaf=lambda s: isinstance(s, memory_ref_type))
    for s in scratch_shapes:
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
        pre, ins = refs[:nprefetch], refs[nprefetch:nprefetch + nin]
        outs, scr = refs[nprefetch + nin:nprefetch + nin + len(out_avals)], \
            refs[nprefetch + nin + len(out_avals):]
        _tracing.depth += 1
        try:
            with grid_point(_Grid(idx), _Grid(np.int32(g) for g in grid)):
                kernel(*tree_util.tree_unflatten(in_tree, pre + ins),
                       *tree_util.tree_leaves(tree_util.tree_unflatten(out_tree, outs)),
                       *tree_util.tree_unflatten(scratch_tree, scr))
        finally:
            _tracing.depth -= 1
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
    semantics = getattr(compiler_params, "dimension_semantics", None)
    if semantics is None:
        semantics = ("arbitrary",) * ngrid
    semantics = tuple(str(getattr(s, "value", s)).lower() for s in semantics)
    if len(semantics) != ngrid:
        raise ValueError(f"Pallas kernel `{kname}`: dimension_semantics {semantics} must "
                         f"have one entry per grid dimension (grid {grid}).")
    spec = KernelSpec(
        name=kname, jaxpr=jaxpr, grid=grid, in_blocks=in_blocks, out_blocks=out_blocks,
        num_scalar_prefetch=nprefetch, prefetch_avals=prefetch_avals, scratch_avals=scratch,
        dimension_semantics=semantics,
        vmem_limit_bytes=getattr(compiler_params, "vmem_limit_bytes", None),
        compiler_params=compiler_params, source=source)
    outs = pallas_call_p.bind(*prefetch, *operands, kernel=spec, out_avals=tuple(out_avals),
                              input_output_aliases=tuple(sorted(input_output_aliases.items())))
    return tree_util.tree_unflatten(out_tree, outs)
