"""Sorting: ``sort`` and ``argsort`` over the multi-operand stable ``sort`` primitive, as
``jax.numpy`` stages them (an inner ``jit`` named ``sort`` / ``argsort``)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.numpy._jitutil import jit_named
from traxla.ir import dtypes
from traxla.ir.shape_poly import int_dtype_for_dim
from traxla.numpy._promotion import check_arraylike
from traxla.numpy._shape import ravel


def _canonicalize_axis(axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _prepare(name, a, axis, kind, order):
    check_arraylike(name, a)
    arr = lax._asarray(a)
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")
    if axis is None:
        arr = ravel(arr)
        axis = 0
    return arr, _canonicalize_axis(axis, len(lax.shape_of(arr)))


def _sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    arr, dimension = _prepare("sort", a, axis, kind, order)
    result = lax.sort(arr, dimension=dimension, is_stable=stable)
    return lax.rev(result, (dimension,)) if descending else result


sort = jit_named(_sort, "sort", ("axis", "kind", "order", "stable", "descending"))


def _argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    arr, dimension = _prepare("argsort", a, axis, kind, order)
    shape = lax.shape_of(arr)
    if dtype is not None:
        idx_dtype = dtypes.to_dtype(dtype)
    else:
        idx_dtype = int_dtype_for_dim(shape[dimension], signed=True)
        if idx_dtype == np.dtype(np.int32):
            idx_dtype = dtypes.default_int()
    iota = lax.broadcasted_iota(idx_dtype, shape, dimension)
    if descending and stable:
        arr = lax.rev(arr, (dimension,))
        iota = lax.rev(iota, (dimension,))
    _, indices = lax.sort_key_val(arr, iota, dimension=dimension, is_stable=stable)
    return lax.rev(indices, (dimension,)) if descending else indices


argsort = jit_named(_argsort, "argsort", ("axis", "kind", "order", "stable", "descending",
                                          "dtype"))
