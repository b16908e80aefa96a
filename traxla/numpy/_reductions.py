"""Reductions: sum, prod, max, min, mean, any, all, argmax, argmin (axis, keepdims,
dtype, initial, where), binding what ``jax.numpy`` binds: the input is
pre-cast (to a numeric dtype for sum/prod, to bool for any/all), converted to
the computation dtype, reduced, and expanded back for ``keepdims``."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.tracer.staging import DynamicJaxprTracer as _DynamicJaxprTracer
from traxla.runtime import transfer_guard
from traxla.numpy._promotion import check_arraylike, promote_dtypes_numeric, promote_args_inexact
import traxla.numpy._ufuncs as _numpy__ufuncs
import traxla.numpy._shape as _numpy__shape
from traxla.numpy._jitutil import jit_named
import traxla.numpy._creation as _numpy__creation


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


# dtypes a reduction computes in as they are (no pre-cast, no integer promotion, no f16
# upcast): a staged operand of one of them, strongly typed, takes the short path below
_AS_IS = frozenset(map(np.dtype, ("float32", "float64", "complex64", "complex128")))
_AS_IS_REDUCTIONS = frozenset(("sum", "prod", "max", "min"))


def _reduce(name, a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
            upcast_f16=None):
    reducer, op, bool_reducer, bool_op, identity, preproc, has_identity, promote_ints = _SPECS[name]
    if (type(a) is _DynamicJaxprTracer and where is None and initial is None and out is None
            and not keepdims and (aval := a.aval).dtype in _AS_IS and not aval.weak_type
            and (dtype is None or dtype is aval.dtype) and name in _AS_IS_REDUCTIONS):
        # What the general path below does for such an operand: the pre-cast and the
        # conversions are to its own type (none bound), the reducer is the dtype's
        axes = _axes(axis, len(aval.shape))
        if has_identity or not builtins.any(aval.shape[d] == 0 for d in axes):
            return reducer(a, axes)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    check_arraylike(name, a)
    a = lax._asarray(a)
    if where is not None:
        where = lax._asarray(where)
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
        a = _numpy__ufuncs._where(where, a, _init_value(computation, identity))
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
        return lax._lift(_reduce(name, a, axis, dtype, out, keepdims, initial, where))
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
    return lax._lift(_mean(a, axis, dtype, out, keepdims, where=where))


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    check_arraylike("mean", a)
    a = lax._asarray(a)
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
        normalizer = sum(_numpy__shape.broadcast_to(where, lax.shape_of(a)), axis, dtype=computation,
                         keepdims=keepdims)
    total = _reduce("sum", a, axis, computation, None, keepdims, None, where, upcast_f16=False)
    with transfer_guard.internal():  # the count: a constant of JAX's jitted mean
        quotient = lax.div(total, normalizer)
    return lax._convert_element_type(quotient, result_dtype, False)


def _arg(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=False):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        check_arraylike(name, a)
        a = lax._asarray(a)
        shape = lax.shape_of(a)
        if axis is None:
            dims = tuple(range(len(shape)))
            a, axis = _numpy__shape.ravel(a), 0
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


# -- variance, standard deviation, peak-to-peak, cumulative reductions (issue #3) --------------

def _ensure_optional_axes(axis):
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def _var_promote_types(a_dtype, dtype):
    if dtype:
        if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                             "computing the variance of an array of complex values.")
        computation_dtype = dtype
    else:
        if not dtypes.is_inexact(a_dtype):
            dtype = dtypes.default_float()
            computation_dtype = dtype
        else:
            dtype = np.array(0, a_dtype).real.dtype
            computation_dtype = a_dtype
    return _upcast_f16(np.dtype(computation_dtype)), np.dtype(dtype)


def _count(a, axis, keepdims, where, dtype):
    if where is None:
        shape = lax.shape_of(a)
        if axis is None:
            count = math.prod(shape)
        else:
            count = math.prod(shape[i] for i in _axes(axis, len(shape)))
        return lax.convert_element_type(count, dtype)
    return sum(_numpy__shape.broadcast_to(where, lax.shape_of(a)), axis, dtype=dtype, keepdims=keepdims)


def _var_impl(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None,
              a_mean=None):
    if where is not None:
        where = lax._asarray(where)
        if not dtypes.is_bool(lax.dtype_of(where)):
            raise ValueError(f"jnp.var: where must be None or a boolean array; got "
                             f"where.dtype={lax.dtype_of(where)}.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    computation_dtype, dtype = _var_promote_types(lax.dtype_of(a), dtype)
    a = lax._asarray(a).astype(computation_dtype)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        check_arraylike("var", a_mean)
        a_mean = lax._asarray(a_mean).astype(computation_dtype)
    centered = lax.sub(a, a_mean)
    if dtypes.is_complex(computation_dtype):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = lax.dtype_of(centered)
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis, keepdims, where, computation_dtype)
    normalizer = lax.sub(normalizer, lax.convert_element_type(correction, computation_dtype))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = lax.div(result, normalizer).astype(dtype)
    return _numpy__ufuncs._where(_numpy__ufuncs.ufuncs["greater"](normalizer, 0), result, np.nan)


def _jit(fn, name, static_argnames=()):
    return jit_named(fn, name, static_argnames)


def _var_args(name, a, axis, dtype, ddof, correction):
    """``var``/``std``'s arguments checked: ``(a, axis, dtype, correction)``, with
    ``correction`` taken from ``ddof`` when not given."""
    if correction is None:
        correction = ddof
    elif not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    check_arraylike(name, a)
    return (lax._asarray(a), _ensure_optional_axes(axis),
            None if dtype is None else dtypes.to_dtype(dtype), correction)


_var = _jit(_var_impl, "_var", static_argnames=("axis", "dtype", "keepdims"))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Variance along ``axis`` (``correction``/``ddof`` degrees of freedom)."""
    a, axis, dtype, correction = _var_args("var", a, axis, dtype, ddof, correction)
    return _var(a, axis=axis, dtype=dtype, out=out, correction=correction, keepdims=keepdims,
                where=where, a_mean=mean)


def _std_impl(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None,
              mean=None):
    if dtype is not None and not dtypes.is_inexact(dtype):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims,
                        where=where, mean=mean))


_std = _jit(_std_impl, "_std", static_argnames=("axis", "dtype", "keepdims"))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    """Standard deviation along ``axis``: ``sqrt(var(...))``."""
    a, axis, dtype, correction = _var_args("std", a, axis, dtype, ddof, correction)
    return _std(a, axis=axis, dtype=dtype, out=out, correction=correction, keepdims=keepdims,
                where=where, mean=mean)


def _ptp_impl(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    x = amax(a, axis=axis, keepdims=keepdims)
    y = amin(a, axis=axis, keepdims=keepdims)
    return lax.sub(x, y)


_ptp = _jit(_ptp_impl, "_ptp", static_argnames=("axis", "keepdims"))


def ptp(a, axis=None, out=None, keepdims=False):
    check_arraylike("ptp", a)
    return _ptp(lax._asarray(a), _ensure_optional_axes(axis), out, keepdims)


def _cumulative_reduction(name, reduction, a, axis, dtype, out=None, fill_nan=False,
                          fill_value=0, promote_integers=False):
    check_arraylike(name, a)
    a = lax._asarray(a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    if axis is None or not lax.shape_of(a):
        a = lax.reshape(a, (math.prod(lax.shape_of(a)),))
    if axis is None:
        axis = 0
    shape = lax.shape_of(a)
    num_dims = len(shape)
    axis = operator.index(axis)
    if not -num_dims <= axis < num_dims:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {num_dims}")
    axis %= num_dims
    if fill_nan:
        a = _numpy__ufuncs._where(lax._isnan(a), lax._const(a, fill_value), a)
    if dtype is None:
        if promote_integers or lax.dtype_of(a) == np.bool_:
            result_type = _promote_integer_dtype(lax.dtype_of(a))
        else:
            result_type = lax.dtype_of(a)
        computation_type = result_type
    elif dtypes.to_dtype(dtype) == np.dtype("bool"):
        result_type = np.dtype(dtype)
        if lax.dtype_of(a) != result_type:
            a = _numpy__ufuncs.ufuncs["not_equal"](a, 0)
        computation_type = _promote_integer_dtype(result_type)
    else:
        result_type = dtypes.to_dtype(dtype)
        computation_type = result_type
    a = lax.convert_element_type(a, computation_type)
    result = reduction(a, axis)
    return lax.convert_element_type(result, result_type)


def _cumulative(name, reduction, **kw):
    def impl(a, axis=None, dtype=None, out=None):
        return _cumulative_reduction(name, reduction, a, axis, dtype, out, **kw)
    return _jit(impl, name, static_argnames=("axis", "dtype"))


cumsum = _cumulative("cumsum", lambda a, axis: lax.cumsum(a, axis))
cumprod = _cumulative("cumprod", lambda a, axis: lax.cumprod(a, axis))
nancumsum = _cumulative("nancumsum", lambda a, axis: lax.cumsum(a, axis), fill_nan=True,
                        fill_value=0)
nancumprod = _cumulative("nancumprod", lambda a, axis: lax.cumprod(a, axis), fill_nan=True,
                         fill_value=1)


# -- logsumexp (jax._src.ops.special; re-exported by traxla.nn and traxla.scipy.special) -------

def _reduction_dims(a, axis):
    ndim = len(lax.shape_of(a))
    if axis is None:
        return (tuple(range(ndim)),) * 2
    axes = (axis,) if not isinstance(axis, (np.ndarray, tuple, list)) else axis
    canon = []
    for x in axes:
        x = operator.index(x)
        if not -ndim <= x < ndim:
            raise ValueError(f"axis {x} is out of bounds for array of dimension {ndim}")
        canon.append(x % ndim)
    canon = tuple(canon)
    if len(canon) != len(set(canon)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canon, canon


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` along ``axis``, computed stably (max subtracted first)."""
    if where is not None:
        a = _numpy__ufuncs.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = _numpy__ufuncs.where(_numpy__ufuncs.ufuncs["not_equal"](b_arr, 0), a_arr, -np.inf)
    else:
        a_arr, = promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    pos_dims, dims = _reduction_dims(a_arr, axis)
    amax = max(a_arr.real, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(lax.select(_numpy__ufuncs.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, pos_dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_with_dims.astype(lax.dtype_of(a_arr))))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = exp_a.sum(axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not dtypes.is_complex(lax.dtype_of(a_arr)):
        sumexp = abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(lax.dtype_of(sumexp)))
    if return_sign:
        return (out, sign)
    if b is not None and not dtypes.is_complex(lax.dtype_of(out)):
        out = _numpy__ufuncs.where(_numpy__ufuncs.ufuncs["less"](sign, 0), _numpy__creation.array(np.nan, dtype=lax.dtype_of(out)), out)
    return out

import traxla.numpy._ufuncs as _numpy__ufuncs  # noqa: E402  (it imports this module: bound once both are defined)
