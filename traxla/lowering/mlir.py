"""The MLIR context and the small vocabulary every lowering rule uses:
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
from traxla.ir.shape_poly import DimExpr

_lock = threading.Lock()
_context = None


def context() -> ir.Context:
    """One context for the process: creating one costs milliseconds, reusing is free."""
    global _context
    if _context is None:
        with _lock:
            if _context is None:
                registry = ir.DialectRegistry()
                _jax_mlir_ext.register_dialects(registry)
                ctx = ir.Context()
                ctx.append_dialect_registry(registry)
                ctx.load_all_available_dialects()
                chlo.register_dialect(ctx)
                hlo.register_dialect(ctx)
                sdy.register_dialect(ctx)
                _context = ctx
    return _context


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
_type_cache: dict = {}
# ``Operation.create``: an op from its name, result types, operands, attributes and number
# of regions, none inferred (see ``op_result``)
create_op = _create = ir.Operation.create


def element_type(dtype) -> ir.Type:
    t = _type_cache.get(dtype)
    if t is None:
        t = _type_cache[dtype] = _ELEMENT_TYPES[np.dtype(dtype)]()
    return t


def tensor_type(shape, dtype) -> ir.RankedTensorType:
    key = (tuple(shape), dtype)
    t = _type_cache.get(key)
    if t is None:
        dims = [ir.ShapedType.get_dynamic_size() if isinstance(d, DimExpr) else d
                for d in shape]  # an export's symbolic dimension is a dynamic one
        t = _type_cache[key] = ir.RankedTensorType.get(dims, element_type(dtype))
    return t


def aval_type(aval) -> ir.RankedTensorType:
    dtype = aval.dtype
    t = _type_cache.get((aval.shape, dtype))  # hit: a plain array of a shape seen before
    if t is not None:
        return t
    if isinstance(dtype, dtypes.ExtendedDType):  # stored as its physical array
        t = tensor_type(tuple(aval.shape) + dtype.physical_shape, dtype.physical_dtype)
        _type_cache[(tuple(aval.shape), dtype)] = t
        return t
    return tensor_type(aval.shape, dtype)


def constant(value, dtype=None) -> ir.Value:
    """A dense constant; splat for scalars and uniform arrays."""
    x = np.asarray(value, dtype)
    shape = x.shape
    if shape:
        result_type, attrs = constant_parts(x)
    else:  # a scalar (literal, init value, bound): the same few recur in every program
        key = (x.dtype, x.tobytes())
        parts = _scalar_constants.get(key)
        if parts is None:
            if len(_scalar_constants) > 4096:
                _scalar_constants.clear()
            parts = _scalar_constants[key] = constant_parts(x)
        result_type, attrs = parts
    return _create("stablehlo.constant", result_type, (), attrs).result


_scalar_constants: dict = {}  # (dtype, bytes) -> a scalar constant's type and attributes


def constant_parts(x: np.ndarray):
    """A constant op's result types and attributes, for ``create_op`` (reusable)."""
    shape = x.shape
    if x.dtype == dtypes.float0:  # its values (there are none) as JAX writes them: false
        x = np.zeros(shape, dtypes.bool_)
    x = np.ascontiguousarray(x)  # keep ``shape``: this turns a 0-d array into (1,)
    attr = ir.DenseElementsAttr.get(x, type=element_type(x.dtype), shape=shape)
    return (attr.type,), {"value": attr}


def broadcast_to(value: ir.Value, from_aval, to_shape) -> ir.Value:
    """lax's implicit broadcasting of scalars and size-1 dims, made explicit."""
    from_shape = from_aval.shape
    if from_shape == to_shape:
        return value
    key = (from_shape, tuple(to_shape), from_aval.dtype)
    parts = _broadcasts.get(key)
    if parts is None:
        if from_shape == key[1]:
            return value
        rank = len(from_shape) and len(to_shape)
        result_type = tensor_type(to_shape, from_aval.dtype)
        dims = list(range(rank))
        if not all(type(d) is int for d in to_shape):  # a symbolic shape: the dynamic op
            from traxla.lowering.dynamic_shapes import broadcast_in_dim
            return broadcast_in_dim(result_type, value, dims, to_shape)
        if len(_broadcasts) > 4096:
            _broadcasts.clear()
        parts = _broadcasts[key] = ((result_type,), {"broadcast_dimensions": i64_array(dims)})
    return _create("stablehlo.broadcast_in_dim", parts[0], (value,), parts[1]).result


# (from shape, to shape, dtype) -> the static broadcast_in_dim's result types and attributes
_broadcasts: dict = {}


def op_result(name: str, result_type, operands, attributes=None) -> ir.Value:
    """The result of a new single-result op ``name`` at the current insertion point and
    location. ``Operation.create`` directly: the generated builders (``hlo.add``...) spend
    more than half of an op's cost in keyword handling and result type inference, and
    lowering always knows the result type (the equation's aval)."""
    return _create(name, results=(result_type,), operands=operands,
                   attributes=attributes).result


def i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


_i64_arrays: dict = {}  # (name, values) -> {name: array<i64: values>}


def i64_array_attrs(name: str, values) -> dict:
    """``{name: array<i64: values>}``, one per distinct value (``values`` hashable)."""
    try:
        attrs = _i64_arrays.get((name, values))
    except TypeError:  # a list
        values = tuple(values)
        attrs = _i64_arrays.get((name, values))
    if attrs is None:
        if len(_i64_arrays) > 4096:
            _i64_arrays.clear()
        attrs = _i64_arrays[(name, values)] = {name: i64_array(values)}
    return attrs
