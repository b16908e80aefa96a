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

from ..ir import dtypes
from ..ir.shape_poly import DimExpr

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
    if isinstance(dtype, dtypes.ExtendedDType):  # stored as its physical array
        return tensor_type(tuple(aval.shape) + dtype.physical_shape, dtype.physical_dtype)
    return tensor_type(aval.shape, dtype)


def constant(value, dtype=None) -> ir.Value:
    """A dense constant; splat for scalars and uniform arrays."""
    x = np.asarray(value, dtype)
    shape = x.shape
    x = np.ascontiguousarray(x)  # keep ``shape``: this turns a 0-d array into (1,)
    attr = ir.DenseElementsAttr.get(x, type=element_type(x.dtype), shape=shape)
    return hlo.constant(attr)


def broadcast_to(value: ir.Value, from_aval, to_shape) -> ir.Value:
    """lax's implicit broadcasting of scalars and size-1 dims, made explicit."""
    if tuple(from_aval.shape) == tuple(to_shape):
        return value
    if not from_aval.shape:
        dims = []
    else:
        dims = list(range(len(to_shape)))
    from .dynamic_shapes import broadcast_in_dim  # a symbolic shape needs the dynamic op
    return broadcast_in_dim(tensor_type(to_shape, from_aval.dtype), value, dims, to_shape)


def i64_array(values) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])
