"""A Pallas kernel's jaxpr -> a Mosaic module (the layout JAX's Pallas TPU lowering gives
it), and the rule registry the kernel's equations lower through.

The module holds the kernel as a ``func.func`` named after it: its arguments are the grid
indices (``i32``), then a memref per scalar-prefetch operand (SMEM), per input and output
block (VMEM unless the block spec says otherwise) and per scratch buffer; its attributes
are the grid (``iteration_bounds``), ``dimension_semantics``, ``scalar_prefetch``,
``scratch_operands``, ``tpu.core_type`` and, per operand, a ``window_params`` entry naming
the function (``transform_<i>``) that maps the grid indices to the block's indices and the
block's shape (``window_bounds``). A kernel without a grid has neither.

Rules: ``rules[primitive name](ctx, *operands, **params)`` returns the result values. An
operand is an ``ir.Value`` or, for a literal, a :class:`Lit` the rule materializes where
and as it needs (JAX's rules do the same, so the ops match JAX's). A primitive without a
rule raises ``NotImplementedError``, and a rule that refuses an equation its own error
class (ValueError, TypeError, as JAX's rules do), each naming the kernel, the primitive and
the user's source line."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.jaxpr import Literal
from traxla.lowering.mosaic.dialects import arith, func, ir, memory_space, tpu

rules: dict = {}


def register(*names):
    def deco(rule):
        for name in names:
            rules[name] = rule
        return rule
    return deco


class MosaicLoweringError(ValueError):
    """A kernel Mosaic cannot compile: names the kernel, the operation and the source. (An
    operation traxla has no Mosaic rule for raises ``NotImplementedError``, worded alike.)"""


class MosaicUnimplementedError(NotImplementedError):
    """A kernel operation traxla's Mosaic lowering does not implement (same wording)."""


def _located(error: Exception, message: str | None = None) -> Exception:
    """``error`` of the same class (JAX's rules raise ValueError, TypeError or
    NotImplementedError, and a user catches those) with the kernel, operation and line named,
    marked so that an enclosing kernel's lowering does not name them again."""
    if message is not None:
        try:
            error = type(error)(message)
        except Exception:  # noqa: BLE001 - a class that wants other arguments
            kind = MosaicUnimplementedError if isinstance(error, NotImplementedError) else \
                MosaicLoweringError
            error = kind(message)
    error._traxla_kernel_located = True
    return error


class Lit:
    """A literal operand: its value and aval, materialized by the rule that uses it."""
    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval


def element_type(dtype) -> ir.Type:
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return ir.F32Type.get()
    if dtype == dtypes.bfloat16:
        return ir.BF16Type.get()
    if dtype == np.float16:
        return ir.F16Type.get()
    if dtype == np.bool_:
        return ir.IntegerType.get_signless(1)
    if np.issubdtype(dtype, np.integer):
        return ir.IntegerType.get_signless(dtype.itemsize * 8)
    raise NotImplementedError(f"Mosaic kernels have no values of type {dtype}")


def value_type(aval) -> ir.Type:
    """A scalar's element type, an array's vector type."""
    if not aval.shape:
        return element_type(aval.dtype)
    return ir.VectorType.get(list(aval.shape), element_type(aval.dtype))


def memref_type(shape, dtype, space) -> ir.Type:
    """A ref's memref type; a semaphore (``space`` "dma_semaphore" or "semaphore") is an
    array of ``!tpu.dma_semaphore`` / ``!tpu.semaphore`` in ``semaphore_mem``; booleans are
    int32 in memory (JAX's ``BOOL_MEMREF_TYPE``)."""
    if space in ("dma_semaphore", "semaphore", "barrier_semaphore"):
        elt = "dma_semaphore" if space == "dma_semaphore" else "semaphore"
        return ir.MemRefType.get(list(shape), ir.Type.parse(f"!tpu.{elt}"),
                                 memory_space=memory_space("semaphore_mem"))
    if isinstance(dtype, np.dtype) and dtype == np.bool_:
        dtype = np.dtype(np.int32)
    return ir.MemRefType.get(list(shape), element_type(dtype),
                             memory_space=memory_space(space))


def constant(x, mlir_type) -> ir.Value:
    """A scalar ``arith.constant`` of ``mlir_type`` (JAX's ``ir_constant``)."""
    if isinstance(mlir_type, (ir.IndexType, ir.IntegerType)):
        attr = ir.IntegerAttr.get(mlir_type, int(x))
    else:
        attr = ir.FloatAttr.get(mlir_type, float(x))
    return arith.ConstantOp(mlir_type, attr).result


def ensure_value(x, aval=None) -> ir.Value:
    if isinstance(x, Lit):
        return constant(x.val, element_type((aval or x.aval).dtype))
    return x


class KernelContext:
    """What a rule sees: the kernel (name, grid), the equation, its avals, and ``emit``
    to lower a nested jaxpr at the current insertion point."""

    def __init__(self, kernel_name, grid, grid_args):
        self.kernel_name = kernel_name
        self.grid = grid
        self.grid_args = grid_args
        self.eqn = None
        self.used = set()  # the variables the jaxpr being lowered reads
        self.squeezed = []  # (memref value, which of its dimensions the kernel's ref lacks)
        self.mesh = None  # the enclosing shard_map's mesh (axis_index, remote DMAs)

    def squeezed_dims(self, ref):
        for value, mask in self.squeezed:
            if value == ref:
                return mask
        return None

    @property
    def avals_in(self):
        return [v.aval for v in self.eqn.invars]

    @property
    def avals_out(self):
        return [v.aval for v in self.eqn.outvars]

    def emit(self, jaxpr, args, call=False):
        """Lowers ``jaxpr`` here (``call``: a function's body, whose operations stay in
        the scopes of its call, as JAX's relative name stacks have them)."""
        return lower_jaxpr(self, jaxpr, args, call)


def _where(eqn) -> str:
    info = getattr(eqn, "source_info", None)
    if info is None:
        return "an unknown source line"
    summary = getattr(info, "summary", None)
    return summary() if summary else str(info)


def _location(eqn) -> ir.Location:
    info = getattr(eqn, "source_info", None)
    try:
        file, line = info.file, info.line
    except AttributeError:
        return ir.Location.unknown()
    if file is None or line is None:
        return ir.Location.unknown()
    return ir.Location.name(eqn.primitive.name,
                            childLoc=ir.Location.file(file, line, info.column or 0))


# The primitives whose rules see their literal operands as such (JAX's rules registered
# with ``ensure_mlir_values=False``, and traxla's cond on a literal index): every other
# rule gets constants, made in operand order before the equation's scopes open.
_LITERALS_TO_RULE = frozenset({
    "add", "add_any", "and", "argmax", "argmin", "div", "max", "min", "mul", "neg", "or",
    "pow", "rem", "scan", "shift_left", "shift_right_arithmetic", "shift_right_logical",
    "sub", "xor", "get", "swap", "load", "masked_load", "masked_swap", "cond"})


def lower_jaxpr(ctx: KernelContext, jaxpr, args, call=False) -> list:
    """Lowers ``jaxpr``'s equations at the current insertion point; its outputs."""
    env = dict(zip(jaxpr.invars, args))

    def read(atom):
        if isinstance(atom, Literal):
            return Lit(atom.val, atom.aval)
        return env[atom]

    outer, outer_used = ctx.eqn, ctx.used
    # the named scopes open (tpu.trace_start), as JAX's jaxpr_subcomp: a nested jaxpr (a
    # jit's, a branch's) starts inside its equation's scopes, which stay open after it
    initial = [str(n) for n in getattr(getattr(outer, "source_info", None), "name_stack",
                                       None) or ()]
    scopes: list = list(initial)
    ctx.used = {v for e in jaxpr.eqns for v in e.invars if not isinstance(v, Literal)}
    ctx.used.update(v for v in jaxpr.outvars if not isinstance(v, Literal))
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        rule = rules.get(name)
        if rule is None:
            raise _located(NotImplementedError(
                f"Pallas kernel `{ctx.kernel_name}`: Mosaic cannot lower the operation "
                f"`{name}` (traxla has no Mosaic rule for it), at {_where(eqn)}"))
        ctx.eqn = eqn
        operands = list(map(read, eqn.invars))
        if name not in _LITERALS_TO_RULE:  # (made before the scope changes, as JAX does)
            operands = [ensure_value(x, v.aval) if isinstance(x, Lit) else x
                        for x, v in zip(operands, eqn.invars)]
        scopes = _enter_scopes(scopes, initial if call else [str(n) for n in getattr(
            eqn.source_info, "name_stack", None) or ()])
        try:
            with _location(eqn):  # Mosaic's own errors (on the chip) name the user's line
                outs = rule(ctx, *operands, **eqn.params)
        except (NotImplementedError, ValueError, TypeError) as e:
            if isinstance(e, (MosaicLoweringError, MosaicUnimplementedError)) or \
                    getattr(e, "_traxla_kernel_located", False):
                raise
            raise _located(e, f"Pallas kernel `{ctx.kernel_name}`: Mosaic cannot lower the "
                              f"operation `{name}` at {_where(eqn)}: {e}") from e
        finally:
            ctx.eqn = outer
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    ctx.used = outer_used
    _enter_scopes(scopes, initial)
    return [ensure_value(read(v)) for v in jaxpr.outvars]


def _enter_scopes(current: list, wanted: list) -> list:
    """Closes the scopes of ``current`` that ``wanted`` leaves (``tpu.trace_stop``) and
    opens its new ones (``tpu.trace_start``, level 10); returns ``wanted``."""
    common = 0
    for old, new in zip(current, wanted):
        if old != new:
            break
        common += 1
    for _ in current[common:]:
        tpu.trace_stop()
    for name in wanted[common:]:
        tpu.trace_start(message=name, level=10)
    return wanted


# -- the module ------------------------------------------------------------------------

def _space_of(space) -> str:
    return {None: "vmem", "vmem": "vmem", "smem": "smem", "any": "any",
            "hbm": "hbm", "semaphore_mem": "semaphore_mem", "dma_semaphore": "dma_semaphore",
            "semaphore": "semaphore"}[space]


def _semantics_attr(semantics) -> ir.Attribute:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#tpu.dimension_semantics<{s}>")
                             for s in semantics])


# The TPU's VMEM: 128 MiB on v4, v5e, v5p and v6e (a kernel's blocks, double-buffered,
# and its scratch must fit in what the compiler parameters allow, at most this).
VMEM_BYTES = 128 * 1024 * 1024


def check_blocks(spec) -> None:
    """JAX's ``_check_block_mappings`` (block shapes the TPU can tile) and a VMEM budget:
    a ``ValueError`` naming the kernel, the operand and the call's source line."""
    where = f"pallas_call of `{spec.name}` at {spec.source}"
    total = 0
    for block in (*spec.in_blocks, *spec.out_blocks):
        shape, bshape = tuple(block.array_aval.shape), block.block_shape
        dtype = np.dtype(block.array_aval.dtype)
        details = (f" Block spec for {block.origin} in {where} has block shape {bshape}, "
                   f"array shape {shape}, in memory space {block.memory_space}.")
        if block.memory_space == "smem" and bshape == shape:
            continue
        if block.memory_space in ("any", "hbm"):
            if bshape != shape or not _trivial_window(block):
                raise ValueError("The Pallas TPU lowering currently supports in memory space "
                                 "ANY only blocks having the same block shape as the array "
                                 "shape and a trivial index_map (returning all 0s)." + details)
            continue
        if not bshape:
            raise ValueError("The Pallas TPU lowering currently supports only blocks of "
                             "rank >= 1." + details)
        bs0, as0 = bshape[-1], shape[-1]
        if len(bshape) >= 2:
            bs1, as1 = bshape[-2], shape[-2]
            if not ((bs0 == as0 or bs0 % 128 == 0) and (bs1 == as1 or bs1 % 8 == 0)):
                raise ValueError(
                    "The Pallas TPU lowering currently requires that the last two dimensions "
                    "of your block shape are divisible by 8 and 128 respectively, or be equal "
                    "to the respective dimensions of the overall array." + details)
        else:
            bits = 32 if dtype == np.bool_ else dtype.itemsize * 8
            min_tiling = 128 * (32 // bits)
            if not (bs0 == as0 or bs0 % 1024 == 0
                    or (bs0 >= min_tiling and bs0 & (bs0 - 1) == 0)):
                raise ValueError(
                    "The Pallas TPU lowering currently requires that rank 1 block shapes, "
                    "either 1) the first (and only) dimension of the block shape is equal to "
                    "the first (and only) dimension of the array shape, or 2) the first (and "
                    "only) dimension of the block shape is a multiple of 1024, or 3) the "
                    "first (and only) dimension of the block shape is a power of 2 and at "
                    f"least the tiling size ({min_tiling} = 128 * (32 // {bits})) of the "
                    "array shape." + details)
        total += 2 * int(np.prod(bshape)) * dtype.itemsize  # double-buffered
    for space, aval in spec.scratch_avals:
        if space == "vmem":
            total += int(np.prod(aval.shape)) * np.dtype(aval.dtype).itemsize
    total += _scoped_vmem(spec.jaxpr.jaxpr)
    budget = spec.vmem_limit_bytes if spec.vmem_limit_bytes is not None else VMEM_BYTES
    if total > budget:
        raise ValueError(
            f"{where}: its blocks (double-buffered), VMEM scratch and pl.run_scoped "
            f"allocations need {total} bytes of VMEM, over the budget of {budget} bytes"
            + (" (CompilerParams.vmem_limit_bytes)" if spec.vmem_limit_bytes is not None
               else " (the TPU's VMEM)") + "; use smaller blocks.")


def _scoped_vmem(jaxpr) -> int:
    """The most VMEM the ``pl.run_scoped`` allocations of ``jaxpr`` hold at once (nested
    scopes add up, one after another do not)."""
    from traxla.ir.jaxpr import subjaxprs
    most = 0
    for eqn in jaxpr.eqns:
        here = 0
        if eqn.primitive.name == "run_scoped":
            here = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize
                       for space, a in eqn.params["allocs"] if space == "vmem")
        inner = max((_scoped_vmem(j) for j in subjaxprs(eqn.params)), default=0)
        most = max(most, here + inner)
    return most


def build_module(spec, mesh=None) -> ir.Module:
    """The Mosaic module of a :class:`traxla.ir.rules.pallas.KernelSpec` (``mesh``: the
    enclosing ``shard_map``'s, for ``axis_index`` and remote DMAs)."""
    check_blocks(spec)
    from traxla.lowering.mosaic import control_flow, masked, memory, rules, sign  # noqa: F401,E501
    i32 = ir.IntegerType.get_signless(32)
    i64 = ir.IntegerType.get_signless(64)
    grid = spec.grid
    prefetch_types = [memref_type(a.shape, a.dtype, "smem") for a in spec.prefetch_avals]
    blocks = [*spec.in_blocks, *spec.out_blocks]
    block_types = [memref_type(b.block_shape, b.array_aval.dtype, _space_of(b.memory_space))
                   for b in blocks]
    scratch_types = [memref_type(a.shape, a.dtype, _space_of(space))
                     for space, a in spec.scratch_avals]
    arg_types = [i32] * len(grid) + prefetch_types + block_types + scratch_types
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        main = func.FuncOp(spec.name, ir.FunctionType.get(arg_types, []))
        entry = main.add_entry_block()
        with ir.InsertionPoint(entry):
            args = list(entry.arguments)
            ctx = KernelContext(spec.name, grid, args[:len(grid)])
            ctx.mesh = mesh
            first = len(grid) + len(prefetch_types)
            ctx.squeezed = [(args[first + i], b.squeezed) for i, b in enumerate(blocks)
                            if any(b.squeezed)]
            lower_jaxpr(ctx, spec.jaxpr.jaxpr, args)
            func.ReturnOp([])
        main.attributes["dimension_semantics"] = _semantics_attr(spec.dimension_semantics)
        main.attributes["scalar_prefetch"] = ir.IntegerAttr.get(i64, spec.num_scalar_prefetch)
        main.attributes["scratch_operands"] = ir.IntegerAttr.get(i64, len(spec.scratch_avals))
        main.attributes["tpu.core_type"] = ir.Attribute.parse("#tpu.core_type<tc>")
        if grid:
            main.attributes["iteration_bounds"] = ir.DenseI64ArrayAttr.get(
                [ir.ShapedType.get_dynamic_size() if g is None else g for g in grid])
            windows = []
            for i, block in enumerate(blocks):
                if block.memory_space in ("any", "hbm"):
                    windows.append(ir.DictAttr.get({}))
                    continue
                name = f"transform_{i}"
                _transform_function(name, spec, block, i32, prefetch_types)
                params = {"transform_indices": ir.FlatSymbolRefAttr.get(name),
                          "window_bounds": ir.DenseI64ArrayAttr.get(list(block.block_shape))}
                if block.memory_space in (None, "vmem") and _trivial_window(block):
                    # JAX forces single buffering on a whole-array window in VMEM
                    params["pipeline_mode"] = ir.Attribute.parse(
                        "#tpu.pipeline_mode<synchronous>")
                windows.append(ir.DictAttr.get(params))
            main.attributes["window_params"] = ir.ArrayAttr.get(windows)
    return module


def _trivial_window(block) -> bool:
    """The block is the whole array and its index map returns literal zeros (JAX's
    ``BlockMapping.has_trivial_window``)."""
    if tuple(block.block_shape) != tuple(block.array_aval.shape):
        return False
    return all(isinstance(v, Literal) and v.val == 0 for v in block.index_map.jaxpr.outvars)


def _transform_function(name, spec, block, i32, prefetch_types):
    jaxpr = block.index_map.jaxpr
    fn = func.FuncOp(name, ir.FunctionType.get(
        [i32] * len(spec.grid) + prefetch_types, [i32] * len(jaxpr.outvars)))
    entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        ctx = KernelContext(spec.name, spec.grid, list(entry.arguments)[:len(spec.grid)])
        outs = lower_jaxpr(ctx, jaxpr, list(entry.arguments))
        constant(0, i32)  # JAX's transform functions all hold this one (unused) constant
        func.ReturnOp(outs)
