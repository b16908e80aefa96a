"""Reductions: sum, prod, max, min, mean, any, all, argmax, argmin (axis, keepdims)."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ..ir import dtypes
from ._promotion import asarray_scalar


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
    shape = list(lax.shape_of(out))
    for a in sorted(axes):
        shape.insert(a, 1)
    kept = tuple(i for i in range(ndim) if i not in axes)
    return lax.broadcast_in_dim(out, tuple(shape), kept)


def _sum_dtype(dtype):
    """NumPy's sum/prod upcast of bools and narrow integers."""
    if dtypes.is_bool(dtype):
        return dtypes.default_int()
    if dtypes.is_signed_int(dtype) and dtype.itemsize < dtypes.default_int().itemsize:
        return dtypes.default_int()
    if dtypes.is_unsigned_int(dtype) and dtype.itemsize < dtypes.default_uint().itemsize:
        return dtypes.default_uint()
    return dtype


def _reduction(name, lax_fn, upcast=False, to_bool=False, needs_size=False):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        if initial is not None or where is not None:
            raise NotImplementedError(f"jnp.{name}: 'initial' and 'where' are not supported yet.")
        a = asarray_scalar(a)
        ndim = len(lax.shape_of(a))
        axes = _axes(axis, ndim)
        src = lax.dtype_of(a)
        if to_bool:
            target = dtypes.bool_
        elif dtype is not None:
            target = dtypes.to_dtype(dtype)
        else:
            target = _sum_dtype(src) if upcast else src
        if needs_size and any(lax.shape_of(a)[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        if target != src:
            a = lax.convert_element_type(a, target)
        result = lax_fn(a, axes)
        if keepdims:
            result = _keepdims(result, axes, ndim)
        return result
    fn.__name__ = name
    return fn


sum = _reduction("sum", lax.reduce_sum, upcast=True)  # noqa: A001
prod = _reduction("prod", lax.reduce_prod, upcast=True)
max = _reduction("max", lax.reduce_max, needs_size=True)  # noqa: A001
min = _reduction("min", lax.reduce_min, needs_size=True)  # noqa: A001
amax, amin = max, min
any = _reduction("any", lax.reduce_or, to_bool=True)  # noqa: A001
all = _reduction("all", lax.reduce_and, to_bool=True)  # noqa: A001


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    a = asarray_scalar(a)
    ndim = len(lax.shape_of(a))
    axes = _axes(axis, ndim)
    count = math.prod(lax.shape_of(a)[i] for i in axes)
    src = lax.dtype_of(a)
    if dtype is not None:
        target = dtypes.to_dtype(dtype)
    elif dtypes.is_inexact(src):
        target = src
    else:
        target = dtypes.default_float()
    total = sum(a, axis=axis, dtype=target, keepdims=keepdims)
    return lax.div(total, lax._convert_element_type(count, target, False))


def _arg(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=False):
        a = asarray_scalar(a)
        shape = lax.shape_of(a)
        if axis is None:
            if keepdims:
                raise NotImplementedError(f"jnp.{name} with axis=None and keepdims=True")
            from ._shape import ravel
            a, axis = ravel(a), 0
        else:
            axis = _axes(axis, len(shape))[0]
        if lax.shape_of(a)[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, axis, dtypes.default_int())
        return _keepdims(result, (axis,), len(shape)) if keepdims else result
    fn.__name__ = name
    return fn


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)
