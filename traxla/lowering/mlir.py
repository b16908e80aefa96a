"""The MLIR context (one per thread) and the small vocabulary every lowering rule uses:
types of avals, constants, and broadcasting of operands.

All use of jaxlib's MLIR Python bindings is confined to ``lowering/``; the one
private call (``_jax_mlir_ext.register_dialects``) is here.
"""
from __future__ import annotations

import threading

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, func, sdy, stablehlo as hlo  # noqa: F401  (re-exported)

from traxla.ir import dtypes
from traxla.ir.rules.tokens import abstract_token
from traxla.ir.shape_poly import DimExpr


class _ThreadMLIR(threading.local):
    """This thread's MLIR context and the MLIR objects built in it, reused by every module
    the thread lowers. One per thread, not per process: MLIR's objects are not safe to
    create from two threads in one context, and XLA compiles a module inside its context
    with the GIL released (a shared context crashed under threads: issues #27, #33)."""

    def __init__(self):
        self.context = None
        self.types: dict = {}             # dtype or (shape, dtype) -> ir.Type
        self.scalar_constants: dict = {}  # (dtype, bytes) -> a scalar constant's parts
        self.broadcasts: dict = {}        # (from shape, to shape, dtype) -> broadcast parts
        self.i64_arrays: dict = {}        # (name, values) -> {name: array<i64: values>}
        self.rule_caches: dict = {}       # name -> a rule's dict of reusable attributes


_thread = _ThreadMLIR()


def context() -> ir.Context:
    """This thread's context: creating one costs milliseconds, reusing it is free."""
    ctx = _thread.context
    if ctx is None:
        ctx = _thread.context = _new_context()
    return ctx


_THREAD_POOL = ir.ThreadPool()  # one for every thread's context, as JAX's contexts share one


# The dialects JAX's contexts load (``jax.extend.lowering.upstream_dialects``)
upstream_dialects = ir.DialectRegistry()
_jax_mlir_ext.register_dialects(upstream_dialects)


class JaxIrContext(ir.Context):
    """An MLIR context that loads no dialect by itself (``ir.Context()`` loads every dialect
    linked into jaxlib): append ``upstream_dialects`` and load them (JAX's)."""

    def __init__(self, *args, **kwargs):
        super(ir.Context, self).__init__(*args, **kwargs)


def _new_context() -> ir.Context:
    ctx = ir.Context(thread_pool=_THREAD_POOL)
    ctx.append_dialect_registry(upstream_dialects)
    ctx.load_all_available_dialects()
    chlo.register_dialect(ctx)
    hlo.register_dialect(ctx)
    sdy.register_dialect(ctx)
    return ctx


def owned_by_this_thread(module) -> bool:
    """Whether ``module`` lives in this thread's context (so that only this thread, which
    is then busy compiling it, can touch that context)."""
    return getattr(module, "context", None) is _thread.context  # text or bytecode: no


def type_cache() -> dict:
    """This thread's types by dtype and by (shape, dtype) (the emission loop's lookups)."""
    return _thread.types


def rule_cache(name: str) -> dict:
    """A lowering rule's dict ``name`` of MLIR objects (attributes) for this thread's
    context: MLIR objects built in one context must not go into another's modules."""
    caches = _thread.rule_caches
    cache = caches.get(name)
    if cache is None:
        cache = caches[name] = {}
    return cache


_ELEMENT_TYPES = {
    dtypes.bool_: lambda: ir.IntegerType.get_signless(1),
    dtypes.float0: lambda: ir.IntegerType.get_signless(1),  # as JAX: zero-size tangents as i1
    dtypes.int8: lambda: ir.IntegerType.get_signless(8),
    dtypes.int16: lambda: ir.IntegerType.get_signless(16),
    dtypes.int32: lambda: ir.IntegerType.get_signless(32),
    dtypes.int64: lambda: ir.IntegerType.get_signless(64),
    dtypes.uint8: lambda: ir.IntegerType.get_unsigned(8),
    dtypes.uint16: lambda: ir.IntegerType.get_unsigned(16),
    dtypes.uint32: lambda: ir.IntegerType.get_unsigned(32),
    dtypes.uint64: lambda: ir.IntegerType.get_unsigned(64),
    dtypes.float16: lambda: ir.F16Type.get(),
    dtypes.bfloat16: lambda: ir.BF16Type.get(),
    dtypes.float32: lambda: ir.F32Type.get(),
    dtypes.float64: lambda: ir.F64Type.get(),
    # float8_e4m3fn -> ir.Float8E4M3FNType
    **{t: getattr(ir, "Float" + t.name[len("float"):].upper().replace("_", "") + "Type").get
       for t in dtypes.SMALL_FLOATS},
    dtypes.complex64: lambda: ir.ComplexType.get(ir.F32Type.get()),
    dtypes.complex128: lambda: ir.ComplexType.get(ir.F64Type.get()),
}
# ``Operation.create``: an op from its name, result types, operands, attributes and number
# of regions, none inferred (see ``op_result``)
create_op = _create = ir.Operation.create


def element_type(dtype) -> ir.Type:
    types = _thread.types
    t = types.get(dtype)
    if t is None:
        t = types[dtype] = _ELEMENT_TYPES[np.dtype(dtype)]()
    return t


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    key = (tuple(shape), dtype)
    types = _thread.types
    t = types.get(key)
    if t is None:
        dims = [ir.ShapedType.get_dynamic_size() if isinstance(d, DimExpr) else d
                for d in shape]  # an export's symbolic dimension is a dynamic one
        t = types[key] = ir.RankedTensorType.get(dims, element_type(dtype))
    return t


def aval_type(aval) -> ir.RankedTensorType:
    dtype = aval.dtype
    types = _thread.types
    t = types.get((aval.shape, dtype))  # hit: a plain array of a shape seen before
    if t is not None:
        return t
    if aval is abstract_token:  # an XLA token (lax.create_token)
        t = types[(aval.shape, dtype)] = hlo.TokenType.get()
        return t
    if isinstance(dtype, dtypes.ExtendedDType):  # stored as its physical array
        t = tensor_type(tuple(aval.shape) + dtype.physical_shape, dtype.physical_dtype)
        types[(tuple(aval.shape), dtype)] = t
        return t
    return tensor_type(aval.shape, dtype)


def constant(value, dtype=None, loc=None) -> ir.Value:
    """A dense constant; splat for scalars and uniform arrays. ``loc``: its location
    (None: the current one)."""
    x = np.asarray(value, dtype)
    shape = x.shape
    if shape:
        result_type, attrs = constant_parts(x)
    else:  # a scalar (literal, init value, bound): the same few recur in every program
        key = (x.dtype, x.tobytes())
        scalar_constants = _thread.scalar_constants
        parts = scalar_constants.get(key)
        if parts is None:
            if len(scalar_constants) > 4096:
                scalar_constants.clear()
            parts = scalar_constants[key] = constant_parts(x)
        result_type, attrs = parts
    return _create("stablehlo.constant", result_type, (), attrs, loc=loc).result



def constant_parts(x: np.ndarray):
    """A constant op's result types and attributes, for ``create_op`` (reusable)."""
    shape = x.shape
    if x.dtype == dtypes.float0:  # its values (there are none) as JAX writes them: false
        x = np.zeros(shape, dtypes.bool_)
    x = np.ascontiguousarray(x)  # keep ``shape``: this turns a 0-d array into (1,)
    attr = ir.DenseElementsAttr.get(x, type=element_type(x.dtype), shape=shape)
    return (attr.type,), {"value": attr}


def broadcast_to(value: ir.Value, from_aval, to_shape, loc=None) -> ir.Value:
    """lax's implicit broadcasting of scalars and size-1 dims, made explicit. ``loc``: the
    op's location (None: the current one)."""
    from_shape = from_aval.shape
    if from_shape == to_shape:
        return value
    key = (from_shape, tuple(to_shape), from_aval.dtype)
    broadcasts = _thread.broadcasts
    parts = broadcasts.get(key)
    if parts is None:
        if from_shape == key[1]:
            return value
        parts = broadcast_parts(from_aval, to_shape)
        if parts is None:  # a symbolic shape: the dynamic op
            rank = len(from_shape) and len(to_shape)
            with loc or ir.Location.current:
                return _lowering_dynamic_shapes.broadcast_in_dim(
                    tensor_type(to_shape, from_aval.dtype), value, list(range(rank)), to_shape)
        if len(broadcasts) > 4096:
            broadcasts.clear()
        broadcasts[key] = parts
    return _create("stablehlo.broadcast_in_dim", parts[0], (value,), parts[1], loc=loc).result


def broadcast_parts(from_aval, to_shape):
    """The result types and attributes of the ``broadcast_in_dim`` that takes a value of
    ``from_aval`` (a scalar, or size-1 dims) to the static ``to_shape`` (None: a symbolic
    shape, see ``broadcast_to``), for ``create_op``."""
    if not all(type(d) is int for d in to_shape):
        return None
    rank = len(from_aval.shape) and len(to_shape)
    return ((tensor_type(to_shape, from_aval.dtype),),
            {"broadcast_dimensions": i64_array(list(range(rank)))})



def op_result(name: str, result_type, operands, attributes=None) -> ir.Value:
    """The result of a new single-result op ``name`` at the current insertion point and
    location. ``Operation.create`` directly: the generated builders (``hlo.add``...) spend
    more than half of an op's cost in keyword handling and result type inference, and
    lowering always knows the result type (the equation's aval)."""
    return _create(name, results=(result_type,), operands=operands,
                   attributes=attributes).result


def i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def i64_array_attrs(name: str, values) -> dict:
    """``{name: array<i64: values>}``, one per distinct value (``values`` hashable)."""
    i64_arrays = _thread.i64_arrays
    try:
        attrs = i64_arrays.get((name, values))
    except TypeError:  # a list
        values = tuple(values)
        attrs = i64_arrays.get((name, values))
    if attrs is None:
        if len(i64_arrays) > 4096:
            i64_arrays.clear()
        attrs = i64_arrays[(name, values)] = {name: i64_array(values)}
    return attrs

import traxla.lowering.dynamic_shapes as _lowering_dynamic_shapes  # noqa: E402  (it imports this module: bound once both are defined)
