"""``traxla.lax``: thin typed wrappers that bind primitives (no type promotion),
as ``jax.lax``."""
from __future__ import annotations

import builtins
from typing import Sequence

import numpy as np

from ..ir import dtypes
from ..ir.rules.call import jit_p  # noqa: F401
from ..ir.rules.elementwise import P as _E
from ..ir.rules.reduction import P as _R
from ..ir.rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                              dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                              squeeze_p, transpose_p)
from ..tracer import Tracer
from ..tracer.values import concrete_aval, is_concrete

add_p, sub_p, mul_p, div_p = _E["add"], _E["sub"], _E["mul"], _E["div"]
convert_element_type_p = _E["convert_element_type"]
reduce_sum_p = _R["reduce_sum"]
dot_general_p = _R["dot_general"]


class RoundingMethod(int):
    """``round``'s mode: AWAY_FROM_ZERO (0) or TO_NEAREST_EVEN (1); prints as the int."""

    AWAY_FROM_ZERO: "RoundingMethod"
    TO_NEAREST_EVEN: "RoundingMethod"


RoundingMethod.AWAY_FROM_ZERO = RoundingMethod(0)
RoundingMethod.TO_NEAREST_EVEN = RoundingMethod(1)


def aval_of(x):
    return x.aval if isinstance(x, Tracer) else concrete_aval(x)


def shape_of(x):
    return tuple(aval_of(x).shape)


def dtype_of(x):
    return aval_of(x).dtype


def _unary(name, **fixed):
    prim = _E[name]

    def op(x):
        return prim.bind(x, **fixed)
    op.__name__ = name
    return op


def _with_accuracy(name):
    prim = _E[name]

    def op(x, accuracy=None):
        return prim.bind(x, accuracy=accuracy)
    op.__name__ = name
    return op


def _binary(name):
    prim = _E[name]

    def op(x, y):
        return prim.bind(x, y)
    op.__name__ = name
    return op


neg, sign, floor, ceil, is_finite = (_unary(n) for n in ("neg", "sign", "floor", "ceil", "is_finite"))
asin, acos, atan, sinh, cosh = (_unary(n) for n in ("asin", "acos", "atan", "sinh", "cosh"))
asinh, acosh, atanh, abs = (_unary(n) for n in ("asinh", "acosh", "atanh", "abs"))  # noqa: A001
erf, erf_inv, stop_gradient_raw = _unary("erf"), _unary("erf_inv"), _unary("stop_gradient")
bitwise_not = _unary("not")
exp, exp2, log, log1p, expm1 = (_with_accuracy(n) for n in ("exp", "exp2", "log", "log1p", "expm1"))
tanh, logistic, sin, cos, tan = (_with_accuracy(n) for n in ("tanh", "logistic", "sin", "cos", "tan"))
sqrt, rsqrt, cbrt = (_with_accuracy(n) for n in ("sqrt", "rsqrt", "cbrt"))
add, sub, mul, div, rem, pow = (_binary(n) for n in ("add", "sub", "mul", "div", "rem", "pow"))  # noqa: A001
max, min, atan2, nextafter = (_binary(n) for n in ("max", "min", "atan2", "nextafter"))  # noqa: A001
bitwise_and, bitwise_or, bitwise_xor = _binary("and"), _binary("or"), _binary("xor")
shift_left, shift_right_logical = _binary("shift_left"), _binary("shift_right_logical")
shift_right_arithmetic = _binary("shift_right_arithmetic")
eq, ne, lt, le, gt, ge = (_binary(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    return _E["round"].bind(x, rounding_method=RoundingMethod(int(rounding_method)))


def integer_pow(x, y: int):
    return _E["integer_pow"].bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return integer_pow(x, -1)


def stop_gradient(x):
    return stop_gradient_raw(x)


def copy_p_bind(x):
    return _E["copy"].bind(x)


def select_n(which, *cases):
    return _E["select_n"].bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    return _E["clamp"].bind(min, x, max)


def convert_element_type(operand, new_dtype):
    return _convert_element_type(operand, dtypes.to_dtype(new_dtype), False)


def _convert_element_type(operand, new_dtype, weak_type: bool):
    """Converts, folding conversions of concrete scalars into new constants (no equation)."""
    from ..ir.core import Literal
    from ..ir.avals import ShapedArray
    aval = aval_of(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and not isinstance(
            operand, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return operand
    if is_concrete(operand) and not aval.shape:
        value = np.asarray(operand.val if isinstance(operand, Literal) else operand)
        if dtypes.is_complex(value.dtype) and not dtypes.is_complex(new_dtype):
            value = value.real
        return Literal(value.astype(new_dtype), ShapedArray((), new_dtype, weak_type))
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                       sharding=None)


def bitcast_convert_type(operand, new_dtype):
    return _E["bitcast_convert_type"].bind(operand, new_dtype=dtypes.to_dtype(new_dtype))


# -- shapes ---------------------------------------------------------------------

def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    shape = tuple(_concrete_shape(shape))
    aval = aval_of(operand)
    if aval.shape == shape and tuple(broadcast_dimensions) == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape,
                                   broadcast_dimensions=tuple(broadcast_dimensions), sharding=None)


def broadcast(operand, sizes):
    nd = len(shape_of(operand))
    return broadcast_in_dim(operand, tuple(sizes) + shape_of(operand),
                            tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank):
    nd = len(shape_of(x))
    return x if nd == rank else broadcast(x, (1,) * (rank - nd))


def _concrete_shape(shape):
    out = []
    for d in shape:
        if isinstance(d, Tracer):
            raise TypeError(
                f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(shape)}.\n"
                "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."
                f"{d._origin_msg()}")
        out.append(int(d))
    return out


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    new_sizes = tuple(_concrete_shape((new_sizes,) if isinstance(new_sizes, int) else new_sizes))
    same_dims = dimensions is None or tuple(dimensions) == tuple(range(len(shape_of(operand))))
    if shape_of(operand) == new_sizes and same_dims:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes,
                          dimensions=None if same_dims else tuple(dimensions), sharding=None)


def squeeze(array, dimensions):
    nd = len(shape_of(array))
    dims = tuple(sorted(d % nd for d in dimensions)) if nd else ()
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    shape = list(shape_of(array))
    ndim_out = len(shape) + len(dimensions)
    dims = sorted(d % ndim_out for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


def transpose(operand, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def rev(operand, dimensions):
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    return pad_p.bind(operand, padding_value,
                      padding_config=tuple(tuple(int(v) for v in c) for c in padding_config))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    return slice_p.bind(operand, start_indices=tuple(int(i) for i in start_indices),
                        limit_indices=tuple(int(i) for i in limit_indices),
                        strides=None if strides is None else tuple(int(s) for s in strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    shape = shape_of(operand)
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    size = shape[axis]
    start_index = 0 if start_index is None else start_index
    limit_index = size if limit_index is None else limit_index
    start[axis] = start_index + size if start_index < 0 else start_index
    limit[axis] = limit_index + size if limit_index < 0 else limit_index
    strides[axis] = stride
    return slice(operand, start, limit, None if stride == 1 else strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    size = shape_of(operand)[axis]
    index = index + size if index < 0 else index
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_indices(operand, start_indices):
    """Negative start indices count from the end, as JAX normalizes them."""
    out = []
    for i, d in zip(start_indices, shape_of(operand)):
        if isinstance(i, (builtins.int, np.integer)) and not isinstance(i, builtins.bool):
            out.append(i + d if i < 0 else i)
            continue
        d_arr = _convert_element_type(d, dtype_of(i), False)
        out.append(select(i < 0, i + d_arr, i))
    return out


def dynamic_slice(operand, start_indices, slice_sizes):
    idx = _dynamic_indices(operand, list(start_indices))
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices):
    idx = _dynamic_indices(operand, list(start_indices))
    return dynamic_update_slice_p.bind(operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    shape = shape_of(operand)
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    starts = [0] * len(shape_of(operand))
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    return iota_p.bind(dtype=dtypes.to_dtype(dtype), shape=tuple(_concrete_shape(shape)),
                       dimension=int(dimension), sharding=None)


# -- contractions and reductions -------------------------------------------------

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.to_dtype(preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=pet, out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    lnd, rnd = len(shape_of(lhs)), len(shape_of(rhs))
    if lnd not in (1, 2) or rnd not in (1, 2):
        raise TypeError(f"lax.dot requires 1- or 2-D operands, got shapes {shape_of(lhs)} and "
                        f"{shape_of(rhs)}; use dot_general for higher ranks.")
    return dot_general(lhs, rhs, (((lnd - 1,), (0,)), ((), ())), precision, preferred_element_type)


def reduce_sum(operand, axes):
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def _reducer(name):
    prim = _R[name]

    def op(operand, axes):
        return prim.bind(operand, axes=tuple(axes))
    op.__name__ = name
    return op


reduce_max, reduce_min, reduce_prod = _reducer("reduce_max"), _reducer("reduce_min"), _reducer("reduce_prod")
reduce_and, reduce_or = _reducer("reduce_and"), _reducer("reduce_or")


def argmax(operand, axis: int, index_dtype):
    return _R["argmax"].bind(operand, axes=(int(axis),), index_dtype=dtypes.to_dtype(index_dtype))


def argmin(operand, axis: int, index_dtype):
    return _R["argmin"].bind(operand, axes=(int(axis),), index_dtype=dtypes.to_dtype(index_dtype))


def full(shape, fill_value, dtype=None):
    dtype = dtypes.to_dtype(dtype) if dtype is not None else dtype_of(fill_value)
    weak = dtype is None
    value = _convert_element_type(fill_value, dtype, weak and aval_of(fill_value).weak_type)
    return broadcast(value, tuple(_concrete_shape(shape)))


def full_like(x, fill_value, dtype=None, shape=None):
    return full(shape_of(x) if shape is None else shape, fill_value,
                dtype_of(x) if dtype is None else dtype)


def zeros_like_array(x):
    return full_like(x, 0)


def sort_dims(dims: Sequence[int]):
    return tuple(sorted(dims))


from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: E402,F401
