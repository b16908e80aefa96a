"""Set operations: ``unique`` (and the array-API ``unique_*``), ``isin``, ``union1d``,
``intersect1d``, ``setdiff1d``, ``setxor1d``. Without ``size=`` the result's length
depends on the data, so the input must be concrete; with ``size=`` (and ``fill_value=``)
they trace, as in JAX."""
from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.lax import dynamic_update_slice
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes
from traxla.numpy._reductions import any as _any, cumsum
from traxla.numpy._searching import concrete_or_error, lexsort, nonzero, searchsorted
from traxla.numpy._ufuncs import isnan, where
from traxla.numpy._shape import concatenate, moveaxis
from traxla.numpy._manipulation import append, diff
from traxla.numpy._sorting import sort

UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size.")


def _creation():
    return _numpy._creation


def _canon(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _in1d_impl(ar1, ar2, invert, method="auto", assume_unique=False):
    c = _creation()
    ar1, ar2 = ensure_arraylike("in1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if arr1.size == 0 or arr2.size == 0:
        return (c.ones if invert else c.zeros)(arr1.shape, dtype=bool)
    if method in ("auto", "compare_all"):
        if invert:
            return (arr1[:, None] != arr2[None, :]).all(-1)
        return (arr1[:, None] == arr2[None, :]).any(-1)
    if method == "binary_search":
        arr2 = lax.sort(arr2)
        ind = searchsorted(arr2, arr1)
        return arr1 != arr2[ind] if invert else arr1 == arr2[ind]
    if method == "sort":
        if assume_unique:
            ind_out = slice(None)
        else:
            arr1, ind_out = unique(arr1, size=len(arr1), return_inverse=True, fill_value=arr2.max())
        aux, ind = lax.sort_key_val(concatenate([arr1, arr2]), c.arange(arr1.size + arr2.size))
        if invert:
            return c.ones(arr1.shape, bool).at[ind[:-1]].set(aux[1:] != aux[:-1], mode="drop")[ind_out]
        return c.zeros(arr1.shape, bool).at[ind[:-1]].set(aux[1:] == aux[:-1], mode="drop")[ind_out]
    raise ValueError(f"method={method!r} is not implemented; options are "
                     "'compare_all', 'binary_search', 'sort', and 'auto'")


_in1d = jit_named(_in1d_impl, "_in1d", ("assume_unique", "invert", "method"))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of ``element`` occurs in ``test_elements``."""
    element, test_elements = ensure_arraylike("isin", element, test_elements)
    result = _in1d(element, test_elements, invert=invert, method=method,
                   assume_unique=assume_unique)
    return result.reshape(np.shape(element))


def _unique_sorted_mask_impl(ar, axis, equal_nan):
    c = _creation()
    aux = moveaxis(ar, axis, 0)
    if dtypes.is_complex(aux.dtype):
        aux = where(isnan(aux), lax._const(aux, np.nan), aux)
    size, *out_shape = aux.shape
    if math.prod(out_shape) == 0:
        size = 1
        perm = c.zeros(1, dtype=int)
    else:
        perm = lexsort(aux.reshape(size, math.prod(out_shape)).T[::-1])
    aux = aux[perm]
    if aux.size:
        if dtypes.is_inexact(aux.dtype) and equal_nan:
            def neq(x, y):
                return lax.ne(x, y) & ~(isnan(x) & isnan(y))
        else:
            neq = lax.ne
        mask = c.ones(size, dtype=bool).at[1:].set(
            _any(neq(aux[1:], aux[:-1]), tuple(range(1, aux.ndim))))
    else:
        mask = c.zeros(size, dtype=bool)
    return aux, mask, perm


_unique_sorted_mask = jit_named(_unique_sorted_mask_impl, "_unique_sorted_mask",
                                ("axis", "equal_nan"))


def _unique(ar, axis, return_index=False, return_inverse=False, return_counts=False,
            equal_nan=True, size=None, fill_value=None, return_true_size=False):
    c = _creation()
    axis = _canon(axis, ar.ndim)
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    aux, mask, perm = _unique_sorted_mask(ar, axis, equal_nan)
    if size is None:
        ind = concrete_or_error(mask, "The error arose in jnp.unique(). " + UNIQUE_SIZE_HINT)
    else:
        ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill_value = lax._lift(lax._asarray(fill_value)).astype(result.dtype)
        if result.shape[0]:
            valid = lax.expand_dims(c.arange(size) < mask.sum(), tuple(range(1, result.ndim)))
            result = where(valid, result, fill_value)
        else:
            result = c.full_like(result, fill_value, shape=(size, *result.shape[1:]))
    result = moveaxis(result, 0, axis)
    ret = (result,)
    if return_index:
        ret += (perm[ind],) if aux.size else (perm,)
    if return_inverse:
        if aux.size:
            imask = cumsum(mask) - 1
            inv_idx = c.zeros(mask.shape, dtype=int).at[perm].set(imask)
        else:
            inv_idx = c.zeros(ar.shape[axis], dtype=int)
        ret += (inv_idx,)
    if return_counts:
        if aux.size:
            if size is None:
                idx = append(np.nonzero(np.asarray(mask))[0].astype(dtypes.default_int()),
                             mask.size)
            else:
                idx = nonzero(mask, size=size + 1)[0]
                idx = idx.at[1:].set(where(idx[1:], idx[1:], mask.size))
            ret += (diff(idx),)
        elif ar.shape[axis]:
            ret += (c.full((1,), ar.shape[axis], dtype=int),)
        else:
            ret += (c.empty(0, dtype=int),)
    if return_true_size:
        ret += (mask.sum(),)
    return ret[0] if len(ret) == 1 else ret


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
    """The sorted unique elements (rows along ``axis``), with optional indices, inverse and
    counts; ``size`` makes the output length static."""
    arr = ensure_arraylike("unique", ar)
    if size is None:
        concrete_or_error(arr, "The error arose for the first argument of jnp.unique(). "
                          + UNIQUE_SIZE_HINT)
    else:
        size = operator.index(size)
    arr_shape = arr.shape
    if axis is None:
        axis_int = 0
        arr = arr.ravel()
    else:
        axis_int = _canon(axis, arr.ndim)
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        idx = 2 if return_index else 1
        result = (*result[:idx], result[idx].reshape(arr_shape), *result[idx + 1:])
    return result


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
    x = ensure_arraylike("unique_all", x)
    return _UniqueAllResult(*unique(x, return_index=True, return_inverse=True, return_counts=True,
                                    equal_nan=False, size=size, fill_value=fill_value))


def unique_counts(x, /, *, size=None, fill_value=None):
    x = ensure_arraylike("unique_counts", x)
    return _UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_inverse(x, /, *, size=None, fill_value=None):
    x = ensure_arraylike("unique_inverse", x)
    return _UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                        fill_value=fill_value))


def unique_values(x, /, *, size=None, fill_value=None):
    x = ensure_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def _concat_unique(arr1, arr2):
    c = _creation()
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    arr1, num_unique1 = _unique(arr1, axis=0, size=arr1.size, return_true_size=True)
    arr2, num_unique2 = _unique(arr2, axis=0, size=arr2.size, return_true_size=True)
    arr = c.zeros(arr1.size + arr2.size, dtype=dtypes.result_type_of(
        (arr1.dtype, False), (arr2.dtype, False))[0])
    arr = dynamic_update_slice(arr, arr1, (0,))
    arr = dynamic_update_slice(arr, arr2, (num_unique1,))
    return arr, num_unique1 + num_unique2


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    c = _creation()
    arr1, arr2 = ensure_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if size is None:
        concrete_or_error(arr1, "The error arose in setdiff1d()")
    else:
        size = operator.index(size)
    fill_value = c.full_like(arr1, fill_value=(0 if fill_value is None else fill_value), shape=())
    if arr1.size == 0:
        return c.full_like(arr1, fill_value, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.size)
    mask = _in1d(arr1, arr2, invert=True, assume_unique=assume_unique)
    if size is None:
        return arr1[concrete_or_error(mask, "The error arose in setdiff1d()")]
    if not assume_unique:
        n_unique = arr1.size + 1 - (arr1 == arr1[0]).sum()
        mask = where(c.arange(arr1.size) < n_unique, mask, False)
    return where(c.arange(size) < mask.sum(), arr1[where(mask, size=size)], fill_value)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted unique values of either array."""
    ar1, ar2 = ensure_arraylike("union1d", ar1, ar2)
    if size is None:
        concrete_or_error(ar1, "The error arose in union1d()")
        concrete_or_error(ar2, "The error arose in union1d()")
    else:
        size = operator.index(size)
    return unique(concatenate((ar1, ar2), axis=None), size=size, fill_value=fill_value)


def _setxor1d_size_impl(arr1, arr2, fill_value, *, assume_unique, size):
    c = _creation()
    if assume_unique:
        aux = sort(concatenate([arr1, arr2]))
        flag = concatenate((bool(aux.size), aux[1:] != aux[:-1], True), axis=None)
    else:
        arr, num_unique = _concat_unique(arr1, arr2)
        mask = c.arange(arr.size + 1) < num_unique + 1
        _, aux = lax.sort([~mask[1:], arr], is_stable=True, num_keys=2)
        flag = mask & concatenate((bool(aux.size), aux[1:] != aux[:-1], False),
                                  axis=None).at[num_unique].set(True)
    aux_mask = flag[1:] & flag[:-1]
    num_results = aux_mask.sum()
    if aux.size:
        indices = nonzero(aux_mask, size=size, fill_value=len(aux))[0]
        vals = aux.at[indices].get(mode="fill", fill_value=0)
    else:
        vals = c.zeros(size, aux.dtype)
    if fill_value is None:
        vals = where(c.arange(len(vals)) < num_results, vals, vals.max())
        return where(c.arange(len(vals)) < num_results, vals, vals.min())
    return where(c.arange(len(vals)) < num_results, vals, fill_value)


_setxor1d_size = jit_named(_setxor1d_size_impl, "_setxor1d_size", ("assume_unique", "size"))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted values in exactly one of the two arrays."""
    ar1, ar2 = ensure_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1.ravel(), ar2.ravel())
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value=fill_value, assume_unique=assume_unique,
                              size=size)
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = concatenate((arr1, arr2))
    if aux.size == 0:
        return aux
    aux = sort(aux)
    flag = concatenate((True, aux[1:] != aux[:-1], True), axis=None)
    return aux[concrete_or_error(flag[1:] & flag[:-1], "The error arose in setxor1d()")]


def _intersect1d_sorted_mask_impl(arr1, arr2, return_indices):
    arr = concatenate((arr1, arr2))
    if return_indices:
        iota = lax.broadcasted_iota(dtypes.default_int(), np.shape(arr), 0)
        aux, indices = lax.sort_key_val(arr, iota)
    else:
        aux, indices = sort(arr), None
    return aux, aux[1:] == aux[:-1], indices


_intersect1d_sorted_mask = jit_named(_intersect1d_sorted_mask_impl, "_intersect1d_sorted_mask",
                                     ("return_indices",))


def _intersect1d_size_impl(arr1, arr2, fill_value, assume_unique, size, return_indices):
    c = _creation()
    if assume_unique:
        ind1, num_unique1 = c.arange(arr1.size), c.full((), arr1.size)
        ind2 = c.arange(arr2.size)
        arr = concatenate([arr1, arr2])
        aux, aux_sort_indices = lax.sort([arr, c.arange(arr.size)], is_stable=True, num_keys=1)
        mask = c.ones(arr.size, dtype=bool)
    else:
        arr1, ind1, num_unique1 = _unique(arr1, 0, size=arr1.size, return_index=True,
                                          return_true_size=True, fill_value=0)
        arr2, ind2, num_unique2 = _unique(arr2, 0, size=arr2.size, return_index=True,
                                          return_true_size=True, fill_value=0)
        arr = c.zeros(arr1.size + arr2.size, dtype=arr1.dtype)
        arr = dynamic_update_slice(arr, arr1, (0,))
        arr = dynamic_update_slice(arr, arr2, (num_unique1,))
        mask = c.arange(arr.size) < num_unique1 + num_unique2
        _, aux, aux_sort_indices = lax.sort([~mask, arr, c.arange(arr.size)], is_stable=True,
                                            num_keys=2)
    aux_mask = (aux[1:] == aux[:-1]) & mask[1:]
    num_results = aux_mask.sum()
    if aux.size:
        val_indices = nonzero(aux_mask, size=size, fill_value=aux.size)[0]
        vals = aux.at[val_indices].get(mode="fill", fill_value=0)
    else:
        val_indices = c.arange(0)
        vals = c.zeros(size, aux.dtype)
    if fill_value is None:
        vals = where(c.arange(len(vals)) < num_results, vals, vals.max())
        vals = where(c.arange(len(vals)) < num_results, vals, vals.min())
    else:
        vals = where(c.arange(len(vals)) < num_results, vals, fill_value)
    if not return_indices:
        return vals
    arr1_indices = aux_sort_indices.at[val_indices].get(mode="fill", fill_value=arr1.size)
    arr1_indices = where(c.arange(len(arr1_indices)) < num_results, arr1_indices, arr1.size)
    arr2_indices = aux_sort_indices.at[val_indices + 1].get(mode="fill",
                                                            fill_value=arr2.size) - num_unique1
    arr2_indices = where(c.arange(len(arr2_indices)) < num_results, arr2_indices, arr2.size)
    if not assume_unique:
        arr1_indices = ind1.at[arr1_indices].get(mode="fill", fill_value=ind1.size)
        arr2_indices = ind2.at[arr2_indices].get(mode="fill", fill_value=ind2.size)
    return vals, arr1_indices, arr2_indices


_intersect1d_size = jit_named(_intersect1d_size_impl, "_intersect1d_size",
                              ("fill_value", "assume_unique", "size", "return_indices"))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """The sorted values in both arrays (with their first indices if asked)."""
    c = _creation()
    ar1, ar2 = ensure_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ar1, ar2)
    arr1, arr2 = arr1.ravel(), arr2.ravel()
    if size is not None:
        return _intersect1d_size(arr1, arr2, return_indices=return_indices, size=size,
                                 fill_value=fill_value, assume_unique=assume_unique)
    ind1 = ind2 = c.arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    aux, mask, aux_sort_indices = _intersect1d_sorted_mask(arr1, arr2, return_indices)
    mask = concrete_or_error(mask, "The error arose in intersect1d()")
    int1d = aux[:-1][mask]
    if return_indices:
        arr1_indices = aux_sort_indices[:-1][mask]
        arr2_indices = aux_sort_indices[1:][mask] - np.size(arr1)
        if not assume_unique:
            arr1_indices, arr2_indices = ind1[arr1_indices], ind2[arr2_indices]
        return int1d, arr1_indices, arr2_indices
    return int1d

import traxla.numpy as _numpy  # noqa: E402  (it imports this module: bound once both are defined)
