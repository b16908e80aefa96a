"""Reductions: sum, prod, max, min, mean, any, all, argmax, argmin (axis, keepdims,
dtype, initial, where), binding what ``jax.numpy`` binds: the input is
pre-cast (to a numeric dtype for sum/prod, to bool for any/all), converted to
the computation dtype, reduced, and expanded back for ``keepdims``."""
from __future__ import annotations

import builtins
import math

import numpy as np

from .. import lax
from ..ir import dtypes
from ._promotion import check_arraylike, promote_dtypes_numeric


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < (ndim or 1) or (ndim == 0 and a not in (0, -1)):
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(int(a) % (ndim or 1))
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axes}")
    return tuple(out) if ndim else ()


def _keepdims(out, axes, ndim):
    return lax.expand_dims(out, tuple(axes))


def _promote_integer_dtype(dtype):
    """NumPy's sum/prod upcast of bools and narrow integers."""
    if dtypes.is_bool(dtype):
        return dtypes.default_int()
    if dtypes.is_signed_int(dtype) and dtype.itemsize < dtypes.default_int().itemsize:
        return dtypes.default_int()
    if dtypes.is_unsigned_int(dtype) and dtype.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dtype


def _upcast_f16(dtype):
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _cast_to_numeric(a):
    return promote_dtypes_numeric(a)[0]


def _cast_to_bool(a):
    return lax._convert_element_type(a, dtypes.bool_, False)


def _init_value(dtype, value):
    if dtypes.is_bool(dtype):
        return np.array(value > 0, dtype)
    if np.isinf(value) and dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if value < 0 else info.max, dtype)
    return np.array(value, dtype)


# name -> (lax reducer, lax binary op, bool reducer, bool op, identity, preprocessing,
#          has identity, promotes integers)
_SPECS = {
    "sum": (lax.reduce_sum, lax.add, lax.reduce_or, lax.bitwise_or, 0, _cast_to_numeric, True, True),
    "prod": (lax.reduce_prod, lax.mul, lax.reduce_and, lax.bitwise_and, 1, _cast_to_numeric, True,
             True),
    "max": (lax.reduce_max, lax.max, lax.reduce_max, lax.max, -np.inf, None, False, False),
    "min": (lax.reduce_min, lax.min, lax.reduce_min, lax.min, np.inf, None, False, False),
    "all": (lax.reduce_and, lax.bitwise_and, lax.reduce_and, lax.bitwise_and, True, _cast_to_bool,
            True, False),
    "any": (lax.reduce_or, lax.bitwise_or, lax.reduce_or, lax.bitwise_or, False, _cast_to_bool,
            True, False),
}


def _reduce(name, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
            upcast_f16=None):
    reducer, op, bool_reducer, bool_op, identity, preproc, has_identity, promote_ints = _SPECS[name]
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    check_arraylike(name, a)
    a = lax.asarray(a)
    if where is not None:
        where = lax.asarray(where)
        if not dtypes.is_bool(lax.dtype_of(where)):
            raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                             f"where.dtype={lax.dtype_of(where)}.")
    if initial is None and not has_identity and where is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                         "where mask one has to specify 'initial'")
    if preproc is not None:
        a = preproc(a)
    ndim = len(lax.shape_of(a))
    axes = _axes(axis, ndim)
    if initial is None and not has_identity and builtins.any(lax.shape_of(a)[d] == 0 for d in axes):
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = lax.dtype_of(a)
        if promote_ints:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = dtypes.to_dtype(dtype)
    upcast = (dtype is None) if upcast_f16 is None else upcast_f16
    if name in ("sum", "prod") and upcast and dtypes.is_inexact(result_dtype):
        computation = _upcast_f16(result_dtype)
    else:
        computation = result_dtype
    a = lax._convert_element_type(a, computation, False)
    if dtypes.is_bool(computation):
        reducer, op = bool_reducer, bool_op
    if where is not None:
        from ._ufuncs import _where
        a = _where(where, a, _init_value(computation, identity))
    result = reducer(a, axes)
    if initial is not None:
        initial_arr = lax._convert_element_type(initial, lax.dtype_of(a), False)
        if lax.shape_of(initial_arr):
            raise ValueError("initial value must be a scalar. Got array of shape "
                             f"{lax.shape_of(initial_arr)}")
        result = op(initial_arr, result)
    if keepdims:
        result = _keepdims(result, axes, ndim)
    return lax._convert_element_type(result, dtypes.to_dtype(dtype) if dtype is not None
                                     else result_dtype, False)


def _reduction(name):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return _reduce(name, a, axis, dtype, out, keepdims, initial, where)
    fn.__name__ = name
    return fn


def _bool_reduction(name):
    def fn(a, axis=None, out=None, keepdims=False, *, where=None):
        return _reduce(name, a, axis, None, out, keepdims, None, where)
    fn.__name__ = name
    return fn


sum = _reduction("sum")  # noqa: A001
prod = _reduction("prod")
max = _reduction("max")  # noqa: A001
min = _reduction("min")  # noqa: A001
amax, amin = max, min
any = _bool_reduction("any")  # noqa: A001
all = _bool_reduction("all")  # noqa: A001


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    check_arraylike("mean", a)
    a = lax.asarray(a)
    src = lax.dtype_of(a)
    if dtype is None:
        result_dtype = src if dtypes.is_inexact(src) else dtypes.default_float()
    else:
        result_dtype = dtypes.to_dtype(dtype)
    computation = (_upcast_f16(result_dtype) if dtype is None and dtypes.is_inexact(result_dtype)
                   else result_dtype)
    ndim = len(lax.shape_of(a))
    if where is None:
        count = math.prod(lax.shape_of(a)[i] for i in _axes(axis, ndim))
        normalizer = lax._convert_element_type(count, computation, False)
    else:
        from ._shape import broadcast_to
        normalizer = sum(broadcast_to(where, lax.shape_of(a)), axis, dtype=computation,
                         keepdims=keepdims)
    total = _reduce("sum", a, axis, computation, None, keepdims, None, where, upcast_f16=False)
    return lax._convert_element_type(lax.div(total, normalizer), result_dtype, False)


def _arg(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=False):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        check_arraylike(name, a)
        a = lax.asarray(a)
        shape = lax.shape_of(a)
        if axis is None:
            dims = tuple(range(len(shape)))
            from ._shape import ravel
            a, axis = ravel(a), 0
        else:
            axis = _axes(axis, len(shape))[0]
            dims = (axis,)
        if lax.shape_of(a)[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, axis, dtypes.default_int())
        return _keepdims(result, dims, len(shape)) if keepdims else result
    fn.__name__ = name
    return fn


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)
