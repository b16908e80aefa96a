"""Index helpers of ``jax.numpy``: ``ix_``, ``mgrid``, ``ogrid``, ``r_``, ``c_``, ``s_``,
``index_exp``, ``indices``, ``unravel_index``, ``ravel_multi_index``, ``diag_indices``
(and ``_from``), ``tril_indices``/``triu_indices`` (and ``_from``), ``mask_indices``."""
from __future__ import annotations

import math
import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.tracer.values import is_concrete
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes, result_type
from traxla.numpy import _creation
from traxla.errors import ConcretizationTypeError
from traxla.numpy._diagonals_tiles import meshgrid, tril, triu
from traxla.numpy._shape import stack, concatenate, expand_dims, transpose
from traxla.numpy._ufuncs import divmod as _divmod, where, clip
from traxla.numpy._reductions import any as _any
import traxla.numpy._searching as _numpy__searching


def _c():
    return _creation


def _concrete(v, what):
    if v is not None and hasattr(v, "aval") and not is_concrete(v):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {v}\n{what}")
    return v


def _make_1d_grid_from_slice(s, op_name):
    c = _c()
    start = _concrete(s.start, f"slice start of jnp.{op_name}") or 0
    stop = _concrete(s.stop, f"slice stop of jnp.{op_name}")
    step = _concrete(s.step, f"slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return c.linspace(start, stop, int(abs(step)))
    return c.arange(start, stop, step)


class _Mgrid:
    """``mgrid[a:b:s, ...]``: a dense stacked ``ij`` grid."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, "mgrid")
        output = promote_dtypes(*(_make_1d_grid_from_slice(k, "mgrid") for k in key))
        output = meshgrid(*output, indexing="ij", sparse=False)
        if len(output) == 0:
            return _c().arange(0)
        return stack(output, 0)


class _Ogrid:
    """``ogrid[a:b:s, ...]``: a sparse (broadcastable) ``ij`` grid."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _make_1d_grid_from_slice(key, "ogrid")
        output = promote_dtypes(*(_make_1d_grid_from_slice(k, "ogrid") for k in key))
        return meshgrid(*output, indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key):
        array = _c().array
        key_tup = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = key_tup[0]
        if isinstance(directive, str):
            key_tup = key_tup[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec = directive.split(",")
                k = len(vec)
                vec = vec + params[k:] if k < 4 else vec[:3] + [params[-1]]
                try:
                    params = list(map(int, vec))
                except ValueError as err:
                    raise ValueError(f"could not understand directive {directive!r}") from err
        axis, ndmin, trans1d, matrix = params
        output = []
        for item in key_tup:
            if isinstance(item, slice):
                newobj, item_ndim = _make_1d_grid_from_slice(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                newobj = array(item, copy=False)
                item_ndim = newobj.ndim
            newobj = array(newobj, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shape_obj = tuple(range(ndmin))
                num_lshifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                newobj = transpose(newobj, tuple(shape_obj[num_lshifts:] + shape_obj[:num_lshifts]))
            output.append(newobj)
        res = concatenate(tuple(output), axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self):
        return 0


class RClass(_AxisConcat):
    """``r_[...]``: concatenation along the first axis (slices become ranges)."""
    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """``c_[...]``: concatenation along the last axis, 1-d inputs as columns."""
    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences."""
    args = [ensure_arraylike("ix", a) for a in args]
    n = len(args)
    output = []
    for i, a in enumerate(args):
        if len(a.shape) != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}")
        if a.dtype == bool:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = a.shape[0]
        if a.size == 0:
            output.append(lax._lift(lax.full(shape, np.zeros((), np.intp))))
        else:
            output.append(lax.broadcast_in_dim(a, shape, (i,)))
    return tuple(output)


def indices(dimensions, dtype=None, sparse=False):
    """The index grid of an array of shape ``dimensions`` (sparse: broadcastable pieces)."""
    dtype = dtypes.canonicalize(np.dtype(int) if dtype is None else dtypes.to_dtype(dtype))
    dimensions = tuple(operator.index(d) for d in dimensions)
    N = len(dimensions)
    output = []
    s = dimensions
    for i, dim in enumerate(dimensions):
        idx = lax.iota(dtype, dim)
        if sparse:
            s = (1,) * i + (dim,) + (1,) * (N - i - 1)
        output.append(lax._lift(lax.broadcast_in_dim(idx, s, (i,))))
    if sparse:
        return tuple(output)
    return stack(output, 0) if output else _c().array([], dtype=dtype)


def unravel_index(indices, shape):
    """Per-axis indices of the flat ``indices`` into ``shape`` (out of range clamps, as JAX)."""
    indices_arr = ensure_arraylike("unravel_index", indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        indices_arr, out[i] = _divmod(indices_arr, s)
    oob_pos = indices_arr > 0
    if dtypes.is_unsigned_int(indices_arr.dtype):
        oob_neg = _c().asarray(False)
    else:
        oob_neg = indices_arr < -1
    return tuple(where(oob_pos, s - 1, where(oob_neg, 0, i)) for s, i in zip(shape, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of the per-axis ``multi_index`` into ``dims`` (modes raise/wrap/clip)."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(operator.index(d) for d in dims)
    arrs = [ensure_arraylike("ravel_multi_index", i) for i in multi_index]
    dtype = result_type(0, *arrs)[0] if dtype is None else dtypes.canonicalize(
        dtypes.to_dtype(dtype))
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype={dtype} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={dtype} not large enough to hold "
                         f"flattened index for dims={dims}. Use the dtype argument to pass a "
                         "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
    for index in arrs:
        if mode == "raise":
            _concrete(index, "The error occurred because ravel_multi_index was jit-compiled "
                             "with mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if not dtypes.is_int(index.dtype):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(bool(_any((i < 0) | (i >= d))) for i, d in zip(arrs, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        arrs = [clip(i, 0, d - 1) for i, d in zip(arrs, dims)]
    elif mode == "wrap":
        arrs = [i % d for i, d in zip(arrs, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = _c().array(0, dtype=dtype)
    for i, s in zip(arrs, strides):
        result = result + i.astype(dtype) * int(s)
    return result


def diag_indices(n, ndim=2):
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax._lift(lax.iota(dtypes.default_int(), n)),) * ndim


def diag_indices_from(arr):
    arr = ensure_arraylike("diag_indices_from", arr)
    if not np.ndim(arr) >= 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(np.shape(arr))) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(np.shape(arr)[0], ndim=np.ndim(arr))


def _triu_size(n, m, k):
    if k < 0:
        return n * m - _triu_size(m, n, (1 - k))
    if k >= m:
        return 0
    mk = min(n, m - k)
    return mk * (mk + 1) // 2 + mk * (m - k - mk)


def tril_indices(n, k=0, m=None):
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _numpy__searching.nonzero(tril(_c().ones((n, m)), k=k), size=_triu_size(m, n, -k))


def triu_indices(n, k=0, m=None):
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _numpy__searching.nonzero(triu(_c().ones((n, m)), k=k), size=_triu_size(n, m, k))


def _shape_2d(name, arr):
    shape = arr.shape if hasattr(arr, "shape") else ensure_arraylike(name, arr).shape
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return shape


def tril_indices_from(arr, k=0):
    shape = _shape_2d("tril_indices_from", arr)
    return tril_indices(shape[0], k=k, m=shape[1])


def triu_indices_from(arr, k=0):
    shape = _shape_2d("triu_indices_from", arr)
    return triu_indices(shape[0], k=k, m=shape[1])


def mask_indices(n, mask_func, k=0, *, size=None):
    return _numpy__searching.nonzero(mask_func(_c().ones((n, n)), k), size=size)
