"""``traxla.lax``: thin typed wrappers that bind primitives (no type promotion),
as ``jax.lax``."""
from __future__ import annotations

import builtins
import math
import operator
from typing import Sequence

import numpy as np

from ..api import jit as _jit
from ..ir import dtypes
from ..ir.core import Literal as _Literal, Var as _Var
from ..ir.rules.call import jit_p  # noqa: F401
from ..ir.rules.elementwise import P as _E
from ..ir.rules.reduction import P as _R
from ..ir.rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                              dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                              squeeze_p, transpose_p)
from ..tracer import Tracer, staging as _staging
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


def _is_array(x) -> bool:
    """JAX's ``isinstance(x, Array)``: tracers and device arrays, not host values."""
    return isinstance(x, Tracer) or hasattr(x, "__traxla_array__")


def asarray(x):
    """``lax.asarray``: arrays pass; Python numbers become weakly typed constants,
    bools and NumPy values strongly typed ones."""
    if _is_array(x):
        return x
    if type(x) in (builtins.int, builtins.float, builtins.complex):
        return _convert_element_type(x, dtypes.python_scalar_dtype(x), True)
    if isinstance(x, (builtins.bool, np.ndarray, np.generic)):
        return _convert_element_type(x, dtypes.canonicalize(np.asarray(x).dtype), False)
    from ..ir.core import Literal
    if isinstance(x, Literal):
        return x
    raise TypeError(f"asarray: expected ArrayLike, got {x} of type {type(x)}.")


def _eager() -> bool:
    from ..tracer import EvalTrace, current_trace
    return type(current_trace()) is EvalTrace


def _lift(x):
    """Constants folded while tracing are ``Literal``s inside traxla; what a public
    function hands back to the user is an ``Array`` (as JAX returns a concrete array)."""
    if type(x) is _Literal or isinstance(x, (np.ndarray, np.generic)):
        # (a NumPy input handed back unchanged, e.g. jnp.abs of a bool, is an Array too)
        if getattr(x, "dtype", None) == dtypes.float0:  # float0 tangents stay NumPy, as in JAX
            return x
        from ..runtime.dispatch import to_array
        return to_array(x)
    return x


def _const(example, val):
    """A constant ``val`` typed like ``example`` (a Python scalar stays a Python scalar)."""
    if type(example) in (builtins.bool, builtins.int, builtins.float, builtins.complex):
        return type(example)(val)
    from ..ir.core import Literal
    from ..ir.avals import ShapedArray
    aval = aval_of(example)
    dt = aval.dtype
    if aval.weak_type and not aval.shape:  # as JAX: a weak scalar's constant is a Python scalar
        py = (builtins.bool if dtypes.is_bool(dt) else builtins.complex if dtypes.is_complex(dt)
              else builtins.float if dtypes.is_float(dt) else builtins.int)(val)
        if dtypes.python_scalar_dtype(py) == dt:
            return py
    return Literal(np.array(val, dt), ShapedArray((), dt, False))


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
    return _lift(_convert_element_type(operand, dtypes.to_dtype(new_dtype), False))


# (Python scalar type, value[, sign of a zero], dtype, weak type) -> Literal: a traced
# ``x * 0.5`` folds the same scalar thousands of times. Bounded; Literals are immutable.
_scalar_literals: dict = {}


def _convert_element_type(operand, new_dtype, weak_type: bool):
    """Converts, folding conversions of concrete scalars into new constants (no equation)."""
    t = type(operand)
    if t is builtins.float or t is builtins.int:
        key = (t, operand, new_dtype, weak_type,
               t is builtins.float and operand == 0.0 and math.copysign(1.0, operand))
        hit = _scalar_literals.get(key)
        if hit is not None:
            return hit
        out = _convert_element_type_uncached(operand, new_dtype, weak_type)
        if type(out) is _Literal:
            if len(_scalar_literals) >= 4096:
                _scalar_literals.clear()
            _scalar_literals[key] = out
        return out
    return _convert_element_type_uncached(operand, new_dtype, weak_type)


def _convert_element_type_uncached(operand, new_dtype, weak_type: bool):
    from ..ir.core import Literal
    from ..ir.avals import ShapedArray
    aval = aval_of(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and not isinstance(
            operand, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return operand
    if (type(operand) in (builtins.int, builtins.float, builtins.complex) and weak_type
            and aval.dtype == new_dtype):
        # a Python scalar at its own weak dtype keeps its value, as JAX's literal does
        return Literal(operand, ShapedArray((), new_dtype, True))
    if is_concrete(operand) and not aval.shape:
        value = np.asarray(operand.val if isinstance(operand, Literal) else operand)
        if dtypes.is_complex(value.dtype) and not dtypes.is_complex(new_dtype):
            value = value.real
        literal = Literal(value.astype(new_dtype), ShapedArray((), new_dtype, weak_type))
        # An Array stays an Array when evaluating eagerly (a Literal is only for tracing).
        return _lift(literal) if hasattr(operand, "__traxla_array__") and _eager() else literal
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                       sharding=None)


def bitcast_convert_type(operand, new_dtype):
    return _E["bitcast_convert_type"].bind(operand, new_dtype=dtypes.to_dtype(new_dtype))


# -- shapes ---------------------------------------------------------------------

def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    shape = tuple(_concrete_shape(shape))
    aval = aval_of(operand)
    # An identity on a tracer is bound, as in JAX: staging drops it (the forwarding rule
    # below), but a trace that records it (linear_transpose's) transposes it to a
    # reduce_sum over no axes. On a concrete array it is the array itself.
    if (aval.shape == shape and tuple(broadcast_dimensions) == tuple(range(len(shape)))
            and not isinstance(operand, Tracer)):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape,
                                   broadcast_dimensions=tuple(broadcast_dimensions), sharding=None)


def _broadcast_in_dim_forwarding(eqn):
    operand = eqn.invars[0]
    if (isinstance(operand, _Var) and eqn.params["shape"] == operand.aval.shape
            and eqn.params["sharding"] in (None, operand.aval.sharding)):
        return [0], None
    return [None], eqn


_staging.forwarding_rules[broadcast_in_dim_p] = _broadcast_in_dim_forwarding


def broadcast(operand, sizes):
    if len(sizes) == 0:
        return _lift(asarray(operand))
    nd = len(shape_of(operand))
    return broadcast_in_dim(operand, tuple(sizes) + shape_of(operand),
                            tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to(arr, shape):
    """NumPy-style broadcast of ``arr`` to ``shape`` as one ``broadcast_in_dim``
    (size-1 dimensions stretch in place)."""
    src = shape_of(arr)
    shape = tuple(_concrete_shape(shape))
    if src == shape:
        return _lift(asarray(arr))
    nlead = len(shape) - len(src)
    if nlead < 0 or builtins.any(s not in (1, d) for s, d in zip(src, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {src} and requested shape {shape}")
    return broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def broadcast_to_rank(x, rank):
    nd = len(shape_of(x))
    return _lift(asarray(x)) if nd == rank else broadcast(x, (1,) * (rank - nd))


from ..ir.shape_poly import DimExpr  # noqa: E402


def _concrete_shape(shape):
    """A user's shape as a list of Python ints (JAX's ``canonicalize_shape``): every entry
    must be an integer (``operator.index``), concrete when traced; else JAX's TypeError."""
    if isinstance(shape, (builtins.int, np.integer)):
        shape = (shape,)
    try:
        entries = list(shape)
    except TypeError:
        entries = None
    out = []
    for d in entries or ():
        if isinstance(d, Tracer) and d.to_concrete_value() is None:
            raise TypeError(
                f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(shape)}.\n"
                "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."
                f"{d._origin_msg()}")
        if isinstance(d, DimExpr):  # export's symbolic dimensions stay symbolic
            out.append(d)
            continue
        try:
            out.append(operator.index(d))
        except TypeError:
            entries = None
            break
    if entries is None:
        shown = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{shown}.")
    return out


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    new_sizes = tuple(_concrete_shape((new_sizes,) if isinstance(new_sizes, int) else new_sizes))
    same_dims = dimensions is None or tuple(dimensions) == tuple(range(len(shape_of(operand))))
    if shape_of(operand) and shape_of(operand) == new_sizes and same_dims and _is_array(operand):
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
                      # kept as given (NumPy integers print as np.int64(...), as in JAX)
                      padding_config=tuple(tuple(c) for c in padding_config))


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
    strides[axis] = int(stride)
    return slice(operand, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    size = shape_of(operand)[axis]
    index = index + size if index < 0 else index
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_indices(operand, start_indices, allow_negative_indices=True):
    """Normalizes start indices as JAX does: static negative indices count from the
    end; traced (or array) indices get ``select(i < 0, i + d, i)``."""
    shape = shape_of(operand)
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    if isinstance(allow_negative_indices, builtins.bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    out = []
    for i, d, allow in zip(start_indices, shape, allow_negative_indices):
        is_py = isinstance(i, (builtins.int, np.integer)) and not isinstance(i, (builtins.bool, np.bool_))
        dt = dtypes.canonicalize(np.asarray(i).dtype) if is_py else dtype_of(i)
        if dtypes.is_unsigned_int(dt):
            out.append(i)
        elif is_py:
            if i < 0 and not allow:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            out.append(_convert_element_type(i + d if i < 0 else i, dt, False))
        elif allow:
            d_arr = _convert_element_type(d, dt, False)
            is_neg = lt(i, _convert_element_type(0, dt, False))
            out.append(select(is_neg, add(i, d_arr), i))
        else:
            out.append(i)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    idx = _dynamic_indices(operand, list(start_indices), allow_negative_indices)
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=tuple(_concrete_shape(slice_sizes)))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    idx = _dynamic_indices(operand, list(start_indices), allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    shape = shape_of(operand)
    axis = int(axis)
    starts = [_const(start_index, 0)] * len(shape)
    starts[axis] = start_index
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def _dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    axis = int(axis)
    nd = len(shape_of(operand))
    starts = [_const(start_index, 0)] * nd
    starts[axis] = start_index
    allow = [False] * nd
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    axis = int(axis)
    if len(shape_of(update)) != len(shape_of(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


# JAX stages these two out as an inner ``jit`` (static: axis, keepdims, allow_negative_indices).
_dynamic_index_in_dim.__name__ = "dynamic_index_in_dim"
dynamic_index_in_dim = _jit(_dynamic_index_in_dim, static_argnums=(2, 3),
                            static_argnames=("axis", "keepdims", "allow_negative_indices"))
_dynamic_update_index_in_dim.__name__ = "dynamic_update_index_in_dim"
dynamic_update_index_in_dim = _jit(_dynamic_update_index_in_dim, static_argnums=(3,),
                                   static_argnames=("axis", "allow_negative_indices"))


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
    if out_sharding is not None:
        out_ndim = len(shape_of(lhs)) + len(shape_of(rhs)) - 2 * len(lc) - len(lb)
        out_sharding = _type_sharding(out_sharding, out_ndim)
    from .ops_extra import canonicalize_precision  # strings/single values become a pair
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=pet, out_sharding=out_sharding)


def _type_sharding(sharding_or_spec, ndim):
    """An ``out_sharding`` argument (a NamedSharding, or a P resolved against the mesh of
    ``traxla.sharding.set_mesh``) as the sharding type of a result."""
    from ..ir.sharding import ShardingType
    if isinstance(sharding_or_spec, ShardingType):
        return sharding_or_spec
    from ..sharding import type_sharding
    return type_sharding(sharding_or_spec, ndim)


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, dimension_numbers=None):
    if dimension_numbers is None:
        ls, rs = shape_of(lhs), shape_of(rhs)
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
            raise ValueError("jax.lax.dot: dimension_numbers must be specified when not performing "
                             "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                             f"products; got lhs_shape={ls} rhs_shape={rs}")
        dimension_numbers = (((len(ls) - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


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
    shape = tuple(_concrete_shape((shape,) if isinstance(shape, (builtins.int, np.integer)) else shape))
    if np.shape(fill_value) if not hasattr(fill_value, "aval") else aval_of(fill_value).shape:
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{shape_of(fill_value)}.")
    if dtype is None:
        weak = aval_of(fill_value).weak_type
        dt = dtype_of(fill_value)
    else:
        weak, dt = False, dtypes.to_dtype(dtype)
    return _lift(broadcast(_convert_element_type(fill_value, dt, weak), shape))


def full_like(x, fill_value, dtype=None, shape=None):
    fill_shape = shape_of(x) if shape is None else shape
    weak = dtype is None and aval_of(x).weak_type
    dt = dtype_of(x) if dtype is None else dtypes.to_dtype(dtype)
    return full(fill_shape, _convert_element_type(fill_value, dt, weak))


def _zero(x):
    return _convert_element_type(0, dtype_of(x), aval_of(x).weak_type)


def _one(x):
    return _convert_element_type(1, dtype_of(x), aval_of(x).weak_type)


def zeros_like_array(x):
    return full_like(x, 0)


def sort_dims(dims: Sequence[int]):
    return tuple(sorted(dims))


from .control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: E402,F401
from .parallel import (all_gather, axis_index, pmax, pmean, pmin, ppermute, psum,  # noqa: E402,F401
                       psum_scatter)


# -- numpy/lax breadth (issue #3): gather/scatter, sort, cumulative reductions, special
#    functions, complex numbers, tile ----------------------------------------------------------

from .slicing import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers,  # noqa: E402,F401
                      gather, index_take, scatter, scatter_add, scatter_max, scatter_min,
                      scatter_mul, scatter_sub)
from ..ir.rules import special as _special  # noqa: E402
from ..ir.rules.indexing import P as _IDX, sort_p  # noqa: E402


def _canonical_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % builtins.max(ndim, 1)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``lax.sort``: one array, or a sequence sorted together by its first ``num_keys``."""
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dimension = _canonical_axis(dimension, len(shape_of(operand[0])))
        return tuple(sort_p.bind(*operand, dimension=dimension, is_stable=is_stable,
                                 num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = _canonical_axis(dimension, len(shape_of(operand)))
    return sort_p.bind(operand, dimension=dimension, is_stable=is_stable, num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``."""
    dimension = _canonical_axis(dimension, len(shape_of(keys)))
    k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def _cumulative(name):
    prim = _IDX[name]

    def op(operand, axis=0, reverse=False):
        return prim.bind(operand, axis=int(axis), reverse=builtins.bool(reverse))
    op.__name__ = name
    return op


cumsum, cumprod, cummax, cummin, cumlogsumexp = (
    _cumulative(n) for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))


def lgamma(x):
    return _special.lgamma_p.bind(x)


def digamma(x):
    return _special.digamma_p.bind(x)


def erfc(x):
    return _special.erfc_p.bind(x)


def square(x):  # noqa: F811  (JAX binds its ``square`` primitive)
    return _special.square_p.bind(x)


def real(x):
    return _special.real_p.bind(x)


def imag(x):
    return _special.imag_p.bind(x)


def complex(x, y):  # noqa: A001
    return _special.complex_p.bind(x, y)


def conj(x):
    return _special.conj_p.bind(x, input_dtype=dtype_of(x))


def tile(operand, reps):
    return _special.tile_p.bind(operand, reps=tuple(int(r) for r in reps))


def _isnan(x):
    return ne(x, x)


def _zeros(x):
    return full_like(x, 0)


def _ones(x):
    return full_like(x, 1)


def _tri(dtype, shape, offset):
    """``numpy.tri``'s mask: ``iota0 + offset >= iota1``, converted to ``dtype``."""
    offset = asarray(offset)
    if not dtypes.is_int(dtype_of(offset)):
        raise TypeError(f"offset must be an integer, got {offset!r}")
    shape_dtype = dtypes.int32 if builtins.all(d <= np.iinfo(np.int32).max for d in shape) \
        else dtypes.int64
    info = np.iinfo(dtype_of(offset))
    if info.min < np.iinfo(shape_dtype).min or info.max > np.iinfo(shape_dtype).max:
        shape_dtype = dtypes.int64
    bool_tri = ge(add(broadcasted_iota(shape_dtype, shape, 0),
                      _convert_element_type(offset, shape_dtype, False)),
                  broadcasted_iota(shape_dtype, shape, 1))
    return _convert_element_type(bool_tri, dtypes.to_dtype(dtype), False)


def _delta(dtype, shape, axes):
    """A Kronecker delta over ``axes`` of ``shape`` (JAX's ``lax._delta``)."""
    import functools
    axes = [int(a) for a in axes]
    base_shape = tuple(shape[a] for a in axes)
    iotas = [broadcasted_iota(np.uint32, base_shape, i) for i in range(len(base_shape))]
    eyes = [eq(i1, i2) for i1, i2 in zip(iotas[:-1], iotas[1:])]
    result = _convert_element_type(functools.reduce(bitwise_and, eyes), dtypes.to_dtype(dtype),
                                   False)
    return broadcast_in_dim(result, tuple(shape), tuple(axes))



def split(operand, sizes, axis=0):
    """Pieces of ``operand`` along ``axis`` with the given sizes (the ``split`` primitive)."""
    from ..ir.rules.shape import split_p
    ndim = len(shape_of(operand))
    return split_p.bind(operand, sizes=tuple(sizes), axis=int(axis) % (ndim or 1))


def _stack(operands, axis=0):
    from ..ir.rules.shape import stack_p
    ndim = len(shape_of(operands[0])) + 1
    return stack_p.bind(*operands, axis=int(axis) % ndim)


def _unstack(operand, axis=0):
    from ..ir.rules.shape import unstack_p
    ndim = len(shape_of(operand))
    return unstack_p.bind(operand, axis=int(axis) % ndim)


from .convolution import (ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers,  # noqa: E402,F401
                          PaddingType, Precision, conv, conv_dimension_numbers,
                          conv_general_dilated, conv_general_dilated_patches,
                          conv_general_permutations, conv_general_shape_tuple, conv_transpose,
                          conv_transpose_shape_tuple, conv_with_general_padding,
                          padtype_to_pads, _conv_shape_tuple as conv_shape_tuple,
                          conv_general_dilated_local, conv_general_dilated_p)
from .windowed import (reduce_p, reduce_window_p, reduce_window_max_p,  # noqa: E402,F401
                       reduce_window_min_p, reduce_window_sum_p, select_and_gather_add_p,
                       select_and_scatter_add_p)
from .fft import fft_p  # noqa: E402,F401
from .windowed import (reduce, reduce_window, reduce_window_max, reduce_window_min,  # noqa: E402,F401
                       reduce_window_shape_tuple, reduce_window_sum)
from .fft import FftType, fft  # noqa: E402,F401
from . import linalg  # noqa: E402,F401  (lax.linalg: LAPACK-backed primitives)
population_count, clz = _unary("population_count"), _unary("clz")


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` and their int32 indices (``jax.lax.top_k``)."""
    from ..ir.rules.topk import top_k_p
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    ndim = len(shape_of(operand))
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape="
                         f"{shape_of(operand)}")
    return top_k_p.bind(operand, k=int(k), axis=int(axis) % builtins.max(ndim, 1))


def _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, is_max_k):
    from ..ir.rules.topk import approx_top_k_p
    return approx_top_k_p.bind(operand, k=k, reduction_dimension=reduction_dimension,
                               recall_target=recall_target, is_max_k=is_max_k,
                               reduction_input_size_override=reduction_input_size_override,
                               aggregate_to_topk=aggregate_to_topk)


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The (approximately) largest ``k`` values and their indices (``jax.lax.approx_max_k``;
    exact on CPU, as JAX's fallback)."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The (approximately) smallest ``k`` values and their indices (``jax.lax.approx_min_k``)."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)


def _topk_prims():
    from ..ir.rules.topk import approx_top_k_p, top_k_p
    return top_k_p, approx_top_k_p


top_k_p, approx_top_k_p = _topk_prims()
population_count_p, clz_p = _E["population_count"], _E["clz"]
# Special functions (igamma, betainc, polygamma, zeta, Bessel I0e/I1e, random_gamma_grad).
from .special import (bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a,  # noqa: E402,F401
                      igammac, polygamma, random_gamma_grad, zeta)
# -- issue #12: the rest of lax's operations and control flow ----------------------------------
from .ops_extra import (DotAlgorithmPreset, broadcast_shapes, composite, mulhi,  # noqa: E402,F401
                        optimization_barrier, reduce_precision, reduce_xor, rng_bit_generator,
                        rng_uniform)
from ..ir.rules.rng import RandomAlgorithm  # noqa: E402,F401
from .control_flow_extra import associative_scan, map, platform_dependent  # noqa: E402,F401,A004
from .parallel_extra import (all_to_all, axis_size, pshuffle, pswapaxes,  # noqa: E402,F401
                             with_sharding_constraint)
from .ops_extra import Precision, stack, unstack  # noqa: E402,F401
# JAX exports its primitives as ``lax.<name>_p`` (custom interpreters key rules on them):
# every elementwise and reduction primitive, under the name it prints with.
for _prim_name, _prim in {**_E, **_R}.items():
    globals().setdefault(f"{_prim_name}_p", _prim)
del _prim_name, _prim
from .solves import custom_linear_solve, custom_root  # noqa: E402,F401
from .ops_extra import optimization_barrier, reduce_precision  # noqa: E402,F401
eq_to_p, lt_to_p, le_to_p = _E["eq_to"], _E["lt_to"], _E["le_to"]


def _canonicalize_float_for_sort(x):
    """-0.0 -> 0.0 and every NaN -> NaN, so total-order comparisons order as NumPy's sort."""
    result = select(eq(x, _zero(x)), _zeros(x), x)
    return select(_isnan(x), full_like(result, np.nan), result)


def _operands_to_keys(*operands, num_keys=1):
    x_keys, y_keys = [], []
    for x, y in zip(operands[:2 * num_keys:2], operands[1:2 * num_keys:2]):
        dt = dtype_of(x)
        if dtypes.is_complex(dt):
            x_keys += [_canonicalize_float_for_sort(real(x)), _canonicalize_float_for_sort(imag(x))]
            y_keys += [_canonicalize_float_for_sort(real(y)), _canonicalize_float_for_sort(imag(y))]
        elif dtypes.is_float(dt):
            x_keys.append(_canonicalize_float_for_sort(x))
            y_keys.append(_canonicalize_float_for_sort(y))
        else:
            x_keys.append(x)
            y_keys.append(y)
    return x_keys, y_keys


def _sort_comparator(last_op, *operands, num_keys=1):
    x_keys, y_keys = _operands_to_keys(*operands, num_keys=num_keys)
    p = None
    for xk, yk in zip(x_keys[::-1], y_keys[::-1]):
        p = (bitwise_or(lt_to_p.bind(xk, yk), bitwise_and(eq_to_p.bind(xk, yk), p))
             if p is not None else last_op.bind(xk, yk))
    return p


def _sort_lt_comparator(*operands, num_keys=1):
    """NumPy's sort order ``x < y`` over (key) operand pairs, as JAX's sort comparator."""
    return _sort_comparator(lt_to_p, *operands, num_keys=num_keys)


def _sort_le_comparator(*operands, num_keys=1):
    """``x <= y`` in the same order (searchsorted's comparator)."""
    return _sort_comparator(le_to_p, *operands, num_keys=num_keys)
