"""NaN-ignoring reductions (``nansum``, ``nanmax``, ``nanmean``, ``nanvar``, ...),
``count_nonzero`` and ``average``, binding what ``jax.numpy`` binds: NaNs are replaced by
the reduction's identity, and an all-NaN slice gives NaN where NumPy does."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact
from traxla.numpy._reductions import (_ensure_optional_axes, _var_promote_types, all as _all, argmax,
                          argmin, max as _max, mean, min as _min, prod, sum as _sum)
from traxla.numpy._ufuncs import _where
from traxla.numpy._creation import ones_like
from traxla.numpy._shape import broadcast_to, moveaxis


def _check_where(name, where):
    if where is None:
        return where
    where = ensure_arraylike(name, where)
    if not dtypes.is_bool(lax.dtype_of(where)):
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                         f"where.dtype={lax.dtype_of(where)}.")
    return where


def _reduction_init_val(a, init_val):
    a_dtype = dtypes.canonicalize(lax.dtype_of(a))
    if a_dtype == np.dtype("bool"):
        return np.array(init_val > 0, dtype=a_dtype)
    try:
        return np.array(init_val, dtype=a_dtype)
    except OverflowError:
        info = np.iinfo(a_dtype)
        return np.array(info.min if init_val < 0 else info.max, dtype=a_dtype)


def _nan_reduction(a, name, reduction, init_val, nan_if_all_nan, axis=None, keepdims=False,
                   where=None, **kwargs):
    a = ensure_arraylike(name, a)
    where = _check_where(name, where)
    if not dtypes.is_inexact(lax.dtype_of(a)):
        return reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    out = reduction(_where(lax._isnan(a), _reduction_init_val(a, init_val), a),
                    axis=axis, keepdims=keepdims, where=where, **kwargs)
    if nan_if_all_nan:
        return _where(_all(lax._isnan(a), axis=axis, keepdims=keepdims), lax._const(a, np.nan), out)
    return out


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("nanmin", out)
    return _nan_reduction(a, "nanmin", _min, np.inf, nan_if_all_nan=initial is None,
                          axis=axis, keepdims=keepdims, initial=initial, where=where)


def _nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("nanmax", out)
    return _nan_reduction(a, "nanmax", _max, -np.inf, nan_if_all_nan=initial is None,
                          axis=axis, keepdims=keepdims, initial=initial, where=where)


def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("nansum", out)
    return _nan_reduction(a, "nansum", _sum, 0, nan_if_all_nan=False, axis=axis,
                          keepdims=keepdims, initial=initial, where=where, dtype=dtype)


def _nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    _no_out("nanprod", out)
    return _nan_reduction(a, "nanprod", prod, 1, nan_if_all_nan=False, axis=axis,
                          keepdims=keepdims, initial=initial, where=where, dtype=dtype)


nanmin = jit_named(_nanmin, "nanmin", ("axis", "keepdims"))
nanmax = jit_named(_nanmax, "nanmax", ("axis", "keepdims"))
nansum = jit_named(_nansum, "nansum", ("axis", "dtype", "keepdims"))
nanprod = jit_named(_nanprod, "nanprod", ("axis", "dtype", "keepdims"))


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    a = ensure_arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    _no_out("nanmean", out)
    a_dtype = lax.dtype_of(a)
    if dtypes.is_bool(a_dtype) or dtypes.is_int(a_dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = a_dtype if dtype is None else dtypes.to_dtype(dtype)
    nan_mask = lax.bitwise_not(lax._isnan(a))
    normalizer = _sum(nan_mask, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


nanmean = jit_named(_nanmean, "nanmean", ("axis", "dtype", "keepdims"))


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = ensure_arraylike("nanvar", a)
    where = _check_where("nanvar", where)
    _no_out("nanvar", out)
    computation_dtype, dtype = _var_promote_types(lax.dtype_of(a), dtype)
    a = lax._asarray(a).astype(computation_dtype)
    a_mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    centered = _where(lax._isnan(a), 0, lax.sub(a, a_mean))
    if dtypes.is_complex(lax.dtype_of(centered)):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    normalizer = _sum(lax.bitwise_not(lax._isnan(a)), axis=axis, keepdims=keepdims, where=where)
    normalizer = normalizer - ddof
    normalizer_mask = lax.le(normalizer, lax._zero(normalizer))
    result = _sum(centered, axis, keepdims=keepdims, where=where)
    result = _where(normalizer_mask, np.nan, result)
    divisor = _where(normalizer_mask, 1, normalizer)
    result = lax.div(result, lax.convert_element_type(divisor, lax.dtype_of(result)))
    return lax.convert_element_type(result, dtype)


nanvar = jit_named(_nanvar, "nanvar", ("axis", "dtype", "keepdims"))


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None):
    a = ensure_arraylike("nanstd", a)
    where = _check_where("nanstd", where)
    _no_out("nanstd", out)
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))


nanstd = jit_named(_nanstd, "nanstd", ("axis", "dtype", "keepdims"))


def _nanarg(name, arg_fn, fill):
    def impl(a, axis=None, out=None, keepdims=None):
        a = ensure_arraylike(name, a)
        _no_out(name, out)
        if not dtypes.is_inexact(lax.dtype_of(a)):
            return arg_fn(a, axis=axis, keepdims=keepdims)
        nan_mask = lax._isnan(a)
        a = _where(nan_mask, fill, a)
        res = arg_fn(a, axis=axis, keepdims=keepdims)
        return _where(_all(nan_mask, axis=axis, keepdims=keepdims), -1, res)
    return jit_named(impl, "_" + name, ("axis", "keepdims"))


nanargmax = _nanarg("nanargmax", argmax, -np.inf)
nanargmin = _nanarg("nanargmin", argmin, np.inf)


def _count_nonzero(a, axis=None, keepdims=False):
    a = ensure_arraylike("count_nonzero", a)
    return _sum(lax.ne(a, lax._const(a, 0)), axis=axis, dtype=dtypes.default_int(),
                keepdims=keepdims)


count_nonzero = jit_named(_count_nonzero, "count_nonzero", ("axis", "keepdims"))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean along ``axis`` (``returned=True`` also gives the sum of weights)."""
    return _average(a, _ensure_optional_axes(axis), weights, returned, keepdims)


def _average(a, axis=None, weights=None, returned=False, keepdims=False):
    if weights is None:
        a = ensure_arraylike("average", a)
        avg = mean(a, axis=axis, keepdims=keepdims)
        if not returned:
            return avg
        if axis is None:
            weights_sum = lax.full((), a.size, dtype=lax.dtype_of(avg))
        elif isinstance(axis, tuple):
            weights_sum = lax.full_like(avg, np.prod([a.shape[d] for d in axis]))
        else:
            weights_sum = lax.full_like(avg, a.shape[axis])
    else:
        a, weights = ensure_arraylike("average", a, weights)
        a, weights = promote_dtypes_inexact(a, weights)
        a_shape, w_shape = a.shape, weights.shape
        if axis is None:
            pass
        elif isinstance(axis, tuple):
            axis = tuple(d % a.ndim for d in axis)
        else:
            axis = axis % a.ndim
        if a_shape != w_shape:
            if len(w_shape) != 1:
                raise TypeError("1D weights expected when shapes of a and weights differ.")
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if w_shape[0] != a_shape[axis]:
                raise ValueError("Length of weights not compatible with specified axis.")
            weights = lax.reshape(weights, (a.ndim - 1) * (1,) + w_shape)
            weights = moveaxis(weights, -1, axis)
        weights_sum = _sum(weights, axis=axis, keepdims=keepdims)
        avg = _sum(a * weights, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg

