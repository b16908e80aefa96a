"""Dynamic shapes for shape-polymorphic export: the value of each dimension variable in the
function being emitted, and the shape tensors that ``dynamic_broadcast_in_dim``,
``dynamic_reshape`` and ``dynamic_iota`` take when a shape holds a symbolic dimension.

The values are the function's leading ``jax.global_constant`` arguments (JAX's calling
convention); XLA never sees dynamic shapes: the caller's static shapes are propagated
through them (``refine_polymorphic_shapes``) before compilation."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from traxla.ir.shape_poly import DimExpr
from traxla.lowering.mlir import constant, hlo, i64_array_attrs, ir, op_result

_state = threading.local()


def is_static(shape) -> bool:
    for d in shape:
        if isinstance(d, DimExpr):
            return False
    return True


@contextmanager
def dim_values(values: dict | None):
    """Makes ``values`` (variable name -> ``tensor<i32>`` value) current while a function's
    body is emitted."""
    outer = getattr(_state, "values", None)
    _state.values = values
    try:
        yield
    finally:
        _state.values = outer


class _Scalar:
    """A ``tensor<i32>`` value with the arithmetic ``DimExpr.evaluate`` applies."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    @staticmethod
    def of(x):
        return x if isinstance(x, _Scalar) else _Scalar(constant(np.int32(x)))

    def __add__(self, other):
        return _Scalar(hlo.add(self.v, _Scalar.of(other).v))

    __radd__ = __add__

    def __mul__(self, other):
        return _Scalar(hlo.multiply(self.v, _Scalar.of(other).v))

    __rmul__ = __mul__

    @staticmethod
    def dim_op(name, a, b):
        """``floordiv`` (Python's, rounding down), ``mod`` (the divisor's sign), ``max``,
        ``min`` of two dimension values."""
        a, b = _Scalar.of(a).v, _Scalar.of(b).v
        if name == "max":
            return _Scalar(hlo.maximum(a, b))
        if name == "min":
            return _Scalar(hlo.minimum(a, b))
        q, r = hlo.divide(a, b), hlo.remainder(a, b)  # truncating
        zero = constant(np.int32(0))
        # the remainder is non-zero and of the other sign than the divisor: round down
        fix = hlo.and_(hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("NE")),
                       hlo.compare(hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("LT")),
                                   hlo.compare(b, zero, hlo.ComparisonDirectionAttr.get("LT")),
                                   hlo.ComparisonDirectionAttr.get("NE")))
        if name == "floordiv":
            return _Scalar(hlo.select(fix, hlo.subtract(q, constant(np.int32(1))), q))
        return _Scalar(hlo.select(fix, hlo.add(r, b), r))


def dim_value(d) -> ir.Value:
    """A dimension (int or expression) as a ``tensor<i32>`` value."""
    if not isinstance(d, DimExpr):
        return constant(np.int32(d))
    values = getattr(_state, "values", None)
    if not values:
        raise ValueError(f"traxla bug: the symbolic dimension '{d}' is used outside a "
                         "shape-polymorphic export (no dimension values in scope)")
    return _Scalar.of(d.evaluate({k: _Scalar(v) for k, v in values.items()})).v


def shape_tensor(shape) -> ir.Value:
    """``tensor<Nxi32>`` holding ``shape`` (for the ``dynamic_*`` ops)."""
    i32_1 = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    parts = [hlo.reshape(i32_1, dim_value(d)) for d in shape]
    if not parts:
        return constant(np.zeros((0,), np.int32))
    return parts[0] if len(parts) == 1 else hlo.concatenate(parts, 0)


def broadcast_in_dim(result_type, x, dims, shape):
    if is_static(shape):
        return op_result("stablehlo.broadcast_in_dim", result_type, (x,),
                         i64_array_attrs("broadcast_dimensions", dims))
    return hlo.dynamic_broadcast_in_dim(result_type, x, shape_tensor(shape), list(dims))


def reshape(result_type, x, shape):
    if is_static(shape):
        return op_result("stablehlo.reshape", result_type, (x,))
    return hlo.dynamic_reshape(result_type, x, shape_tensor(shape))


def iota(result_type, dimension: int, shape):
    if is_static(shape):
        return hlo.iota(result_type, dimension)
    return hlo.dynamic_iota(result_type, shape_tensor(shape), iota_dimension=dimension)


def dynamic_slice(result_type, x, starts, sizes):
    """``dynamic_slice`` of ``sizes`` at the ``tensor<i32>`` ``starts``; with a symbolic size,
    ``real_dynamic_slice`` (start, limit = start + size, stride 1) as JAX emits it."""
    if is_static(sizes):
        return hlo.dynamic_slice(x, starts, ir.DenseI64ArrayAttr.get([int(s) for s in sizes]))
    i32_1 = ir.RankedTensorType.get([1], ir.IntegerType.get_signless(32))
    start = hlo.concatenate([hlo.reshape(i32_1, s) for s in starts], 0)
    limit = hlo.add(start, shape_tensor(sizes))
    strides = constant(np.ones((len(sizes),), np.int32))
    return hlo.real_dynamic_slice(result_type, x, start, limit, strides)
