"""``quantile``, ``percentile``, ``median`` and their NaN-ignoring forms, with every
interpolation method of ``jax.numpy`` (linear, lower, higher, midpoint, nearest,
inverted_cdf with optional weights). The data is sorted along the reduced axis and the two
neighbouring order statistics are gathered and interpolated, as JAX does."""
from __future__ import annotations

import math

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.lax.slicing import GatherDimensionNumbers, gather
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact
from traxla.numpy._reductions import any as _any, cumsum, sum as _sum
from traxla.numpy._ufuncs import _where
from traxla.numpy._indexing import take_along_axis

_METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


def _canon(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _prepare(a, weights, axis, keepdims, method):
    """Moves the reduced axes to one axis; returns (a, weights, axis, keepdim shape)."""
    if weights is not None:
        if dtypes.is_complex(lax.dtype_of(weights)):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        a, weights = promote_dtypes_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            ax_tuple = tuple(_canon(x, a.ndim) for x in (axis if isinstance(axis, tuple) else (axis,)))
            if weights.shape != tuple(a.shape[x] for x in ax_tuple):
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{tuple(a.shape[x] for x in ax_tuple)}")
            weights = lax.broadcast_in_dim(weights, a.shape, broadcast_dimensions=ax_tuple)
    else:
        a, = promote_dtypes_inexact(a)
    keepdim = []
    if dtypes.is_complex(lax.dtype_of(a)):
        raise ValueError("quantile does not support complex input, as the operation is "
                         "poorly defined.")
    if axis is None:
        if keepdims:
            keepdim = [1] * a.ndim
        a = a.ravel()
        if weights is not None:
            weights = weights.ravel()
        axis = 0
    elif isinstance(axis, tuple):
        keepdim = list(a.shape)
        nd = a.ndim
        axis = tuple(_canon(x, nd) for x in axis)
        if len(set(axis)) != len(axis):
            raise ValueError("repeated axis")
        for x in axis:
            keepdim[x] = 1
        keep = set(range(nd)) - set(axis)
        dimensions = list(range(nd))
        for i, s in enumerate(sorted(keep)):
            dimensions[i], dimensions[s] = dimensions[s], dimensions[i]
        untouched = tuple(x for i, x in enumerate(a.shape) if i not in axis)
        touched = tuple(x for i, x in enumerate(a.shape) if i in axis)
        a = lax.reshape(a, untouched + (math.prod(touched),), dimensions)
        if weights is not None:
            weights = lax.reshape(weights, untouched + (math.prod(touched),), dimensions)
        axis = a.ndim - 1
    else:
        axis = _canon(axis, a.ndim)
    return a, weights, axis, keepdim


def _quantile(a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    a, weights, axis, keepdim = _prepare(a, weights, axis, keepdims, method)
    q_shape, q_ndim = q.shape, q.ndim
    if q_ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    a_shape = a.shape
    q_orig = q
    if squash_nans:
        a = _where(lax._isnan(a), np.nan, a)  # NaNs positive, so that they sort last
        if weights is not None:
            a, weights = lax.sort_key_val(a, weights, dimension=axis)
        else:
            a = lax.sort(a, dimension=axis)
        counts = _sum(lax.bitwise_not(lax._isnan(a)), axis=axis, dtype=q.dtype, keepdims=keepdims)
        shape_after = counts.shape
        q = lax.expand_dims(q, tuple(range(q_ndim, len(shape_after) + q_ndim)))
        counts = lax.expand_dims(counts, tuple(range(q_ndim)))
        q = lax.mul(q, lax.sub(counts, lax._const(q, 1)))
        low, high = lax.floor(q), lax.ceil(q)
        high_weight = lax.sub(q, low)
        low_weight = lax.sub(lax._const(high_weight, 1), high_weight)
        low = lax.max(lax._const(low, 0), lax.min(low, counts - 1))
        high = lax.max(lax._const(high, 0), lax.min(high, counts - 1))
        low = lax.convert_element_type(low, dtypes.default_int())
        high = lax.convert_element_type(high, dtypes.default_int())
        out_shape = q_shape + shape_after
        index = [lax.broadcasted_iota(dtypes.default_int(), out_shape, dim + q_ndim)
                 for dim in range(len(shape_after))]
        if keepdims:
            index[axis] = low
        else:
            index.insert(axis, low)
        low_value = a[tuple(index)]
        index[axis] = high
        high_value = a[tuple(index)]
    else:
        a = _where(_any(lax._isnan(a), axis=axis, keepdims=True), np.nan, a)
        if weights is not None:
            a, weights = lax.sort_key_val(a, weights, dimension=axis)
        else:
            a = lax.sort(a, dimension=axis)
        n = lax.convert_element_type(a_shape[axis], lax.dtype_of(q))
        q = lax.mul(q, n - 1)
        low, high = lax.floor(q), lax.ceil(q)
        high_weight = lax.sub(q, low)
        low_weight = lax.sub(lax._const(high_weight, 1), high_weight)
        low = lax.clamp(lax._const(low, 0), low, n - 1)
        high = lax.clamp(lax._const(high, 0), high, n - 1)
        low = lax.convert_element_type(low, dtypes.default_int())
        high = lax.convert_element_type(high, dtypes.default_int())
        slice_sizes = list(a_shape)
        slice_sizes[axis] = 1
        dnums = GatherDimensionNumbers(
            offset_dims=tuple(range(q_ndim, len(a_shape) + q_ndim if keepdims
                                    else len(a_shape) + q_ndim - 1)),
            collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,))
        low_value = gather(a, low[..., None], dimension_numbers=dnums, slice_sizes=slice_sizes)
        high_value = gather(a, high[..., None], dimension_numbers=dnums, slice_sizes=slice_sizes)
        if q_ndim == 1:
            low_weight = lax.broadcast_in_dim(low_weight, low_value.shape, broadcast_dimensions=(0,))
            high_weight = lax.broadcast_in_dim(high_weight, high_value.shape,
                                               broadcast_dimensions=(0,))
    if method == "linear":
        result = lax.add(lax.mul(low_value.astype(q.dtype), low_weight),
                         lax.mul(high_value.astype(q.dtype), high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select(lax.le(high_weight, lax._const(high_weight, 0.5)), low_value, high_value)
    elif method == "midpoint":
        result = lax.mul(lax.add(low_value, high_value), lax._const(low_value, 0.5))
    else:
        result = _inverted_cdf(a, weights, q_orig, axis, keepdims, squash_nans, a_shape)
    if keepdims and keepdim:
        if q_ndim > 0:
            keepdim = [np.shape(q)[0], *keepdim]
        result = result.reshape(keepdim)
    return lax.convert_element_type(result, a.dtype)


def _inverted_cdf(a, weights, q_orig, axis, keepdims, squash_nans, a_shape):
    q_ndim = q_orig.ndim
    if weights is None:
        weights = lax.full_like(a, 1.0)
    zeros = lax.full_like(weights, 0)
    bad_weights = lax.bitwise_or(lax.lt(weights, zeros), lax._isnan(weights))
    nan_data = lax._isnan(a)
    clean_weights = lax.select(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
    cum_weights = cumsum(clean_weights, axis=axis)
    total_weight = lax.index_in_dim(cum_weights, -1, axis=axis, keepdims=keepdims)
    tw_f = lax.expand_dims(total_weight, tuple(range(q_ndim)))
    q_f = lax.reshape(q_orig, q_orig.shape + (1,) * total_weight.ndim)
    target_w = lax.mul(q_f, tw_f)
    target_w_aligned = target_w if keepdims else lax.expand_dims(target_w, (axis + q_ndim,))
    cw_f = lax.expand_dims(cum_weights, tuple(range(q_ndim)))
    is_less = lax.lt(cw_f, target_w_aligned)
    idx = _sum(lax.convert_element_type(is_less, dtypes.default_int()), axis=axis + q_ndim,
               keepdims=keepdims)
    if squash_nans:
        valid_counts = _sum(lax.bitwise_not(nan_data), axis=axis, dtype=q_orig.dtype,
                            keepdims=keepdims)
    else:
        valid_counts = lax.full_like(total_weight, a_shape[axis], dtype=q_orig.dtype)
    limit = lax.sub(valid_counts, lax._const(valid_counts, 1))
    max_idx = lax.convert_element_type(limit, dtypes.default_int())
    max_idx_f = lax.expand_dims(max_idx, tuple(range(q_ndim)))
    max_idx_f = lax.convert_element_type(max_idx_f, idx.dtype)
    idx = lax.max(lax._const(idx, 0), lax.min(idx, max_idx_f))
    idx_take = lax.squeeze(idx, (q_ndim + axis,)) if keepdims else idx
    if q_ndim == 0:
        result = take_along_axis(a, lax.expand_dims(idx_take, (axis,)), axis=axis)
        result = lax.squeeze(result, (axis,))
    else:
        perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim), *range(q_ndim + axis, idx_take.ndim)]
        result = take_along_axis(a, lax.transpose(idx_take, perm), axis=axis)
        result = lax.transpose(result, [perm.index(i) for i in range(len(perm))])
    if keepdims:
        result = lax.expand_dims(result, (q_ndim + axis,))
    all_nan_data = lax.eq(valid_counts, lax.full_like(valid_counts, 0))
    any_bad_weight = _any(bad_weights, axis=axis, keepdims=keepdims)
    if squash_nans:
        force_nan = lax.bitwise_or(any_bad_weight, all_nan_data)
    else:
        force_nan = lax.bitwise_or(any_bad_weight, _any(nan_data, axis=axis, keepdims=keepdims))
    force_nan_f = lax.expand_dims(force_nan, tuple(range(q_ndim)))
    return _where(force_nan_f, lax.full_like(result, np.nan), result)


_STATIC = ("axis", "overwrite_input", "keepdims", "method")


def _check(name, a, q, weights, overwrite_input, out):
    a, q = ensure_arraylike(name, a, q)
    if weights is not None:
        weights = ensure_arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True "
                         "or out != None")
    return a, q, weights


def _quantile_fn(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None):
    a, q, weights = _check("quantile", a, q, weights, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, False, weights)


def _nanquantile_fn(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                    keepdims=False, *, weights=None):
    a, q, weights = _check("nanquantile", a, q, weights, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, True, weights)


quantile = jit_named(_quantile_fn, "quantile", _STATIC)
nanquantile = jit_named(_nanquantile_fn, "nanquantile", _STATIC)


def _quantile_of_percent(name, quantile_fn, a, q, axis, out, overwrite_input, method, keepdims,
                         weights):
    """``quantile_fn`` (``quantile`` or ``nanquantile``) at ``q / 100``."""
    a, q = ensure_arraylike(name, a, q)
    if weights is not None:
        weights = ensure_arraylike(name, weights)
    q, = promote_dtypes_inexact(q)
    return quantile_fn(a, q / 100, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, keepdims=keepdims, weights=weights)


def _percentile_fn(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None):
    return _quantile_of_percent("percentile", quantile, a, q, axis, out, overwrite_input, method,
                                keepdims, weights)


def _nanpercentile_fn(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                      keepdims=False, *, weights=None):
    return _quantile_of_percent("nanpercentile", nanquantile, a, q, axis, out, overwrite_input,
                                method, keepdims, weights)


percentile = jit_named(_percentile_fn, "percentile", _STATIC)
nanpercentile = jit_named(_nanpercentile_fn, "nanpercentile", _STATIC)


def _median_fn(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = ensure_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


def _nanmedian_fn(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = ensure_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


median = jit_named(_median_fn, "median", ("axis", "overwrite_input", "keepdims"))
nanmedian = jit_named(_nanmedian_fn, "nanmedian", ("axis", "overwrite_input", "keepdims"))
