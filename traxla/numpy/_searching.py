"""Searching and selecting: ``nonzero``/``argwhere``/``flatnonzero`` (``size=`` makes them
traceable), ``bincount``, ``searchsorted`` (scan, scan_unrolled, compare_all and sort
methods), ``digitize``, ``lexsort``, ``partition``/``argpartition`` (over ``top_k``),
``sort_complex``, ``extract``/``compress``, ``select``, ``choose``, ``piecewise``,
``place``, ``put`` and ``put_along_axis``."""
from __future__ import annotations

import operator

import numpy as np

from functools import partial

from traxla import lax
from traxla.ir import dtypes
from traxla.tracer.values import is_concrete
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes, check_arraylike
from traxla.numpy._reductions import cumsum, any as _any, argmax
from traxla.numpy._ufuncs import clip
from traxla.errors import ConcretizationTypeError
from traxla.numpy._creation import zeros, arange, zeros_like, array, asarray
from traxla.numpy._shape import (ravel, atleast_1d, transpose, vstack, expand_dims, moveaxis,
                                 broadcast_arrays, stack, concatenate, broadcast_to)
from traxla.batching import vmap
from traxla.numpy._sorting import argsort
from traxla.numpy._index_tricks import indices, unravel_index, indices as _indices
from traxla.numpy._vectorize import vectorize
from traxla.numpy._diagonals_tiles import tile



def _canon(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def concrete_or_error(value, msg):
    """``value`` as a NumPy array, or JAX's ConcretizationTypeError when it is traced."""
    if not is_concrete(value):
        raise ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {value}\n{msg}")
    return np.asarray(value)


def _concrete_int(value, msg):
    return int(concrete_or_error(value, msg))


# -- nonzero, argwhere, flatnonzero, bincount ---------------------------------------------------

def bincount(x, weights=None, minlength=0, *, length=None):
    """Counts (or summed weights) of each non-negative integer in ``x``; ``length`` static."""
    x = ensure_arraylike("bincount", x)
    if not dtypes.is_int(lax.dtype_of(x)):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        length = _concrete_int(
            x.max() if x.size else 0,
            "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, "
            "pass a static `length` argument.")
        length = max(minlength, length + 1)
    else:
        length = operator.index(length)
    if weights is None:
        weights = np.array(1, dtype=dtypes.default_int())
    else:
        weights = ensure_arraylike("bincount", weights)
        if np.shape(x) != np.shape(weights):
            raise ValueError(f"shape of weights must match shape of x. Got "
                             f"x.shape={x.shape} and weights.shape={weights.shape}")
    return zeros(length, lax.dtype_of(weights)).at[clip(x, 0)].add(weights, mode="drop")


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements, one array per axis (``size`` pads or truncates)."""
    arr = ensure_arraylike("nonzero", a)
    if np.ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. "
                         "Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if arr.dtype == bool else (arr != 0)
    if size is None:
        size = _concrete_int(
            mask.sum(), "The size argument of jnp.nonzero must be statically specified "
            "to use jnp.nonzero within JAX transformations.")
    calculated_size = operator.index(size)
    if arr.size == 0 or calculated_size == 0:
        return tuple(zeros(calculated_size, int) for _ in arr.shape)
    flat_indices = cumsum(bincount(cumsum(mask), length=calculated_size))
    strides = (np.cumprod(arr.shape[::-1])[::-1] // arr.shape).astype(np.dtype(flat_indices.dtype))
    out = tuple((flat_indices // stride) % dim for stride, dim in zip(strides, arr.shape))
    if fill_value is not None:
        fill_tuple = fill_value if isinstance(fill_value, tuple) else arr.ndim * (fill_value,)
        if any(np.shape(v) != () for v in fill_tuple):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; "
                             f"got {fill_value}")
        fill_mask = arange(calculated_size) >= mask.sum()
        out = tuple(_where_public(fill_mask, fv, entry) for fv, entry in zip(fill_tuple, out))
    return out


def _where_public(c, x, y):
    return _numpy__ufuncs.where(c, x, y)


def flatnonzero(a, *, size=None, fill_value=None):
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    a = ensure_arraylike("argwhere", a)
    result = transpose(vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    if np.ndim(a) == 0:
        return result[:0].reshape(result.shape[0], 0)
    return result.reshape(result.shape[0], np.ndim(a))


# -- searchsorted, digitize -----------------------------------------------------------------------

def _searchsorted_scan_impl(sorted_arr, query, side, dtype, unrolled):
    """Binary search of each query (a vmap over the query's axes, as JAX's hijax expansion)."""
    n = sorted_arr.shape[0]
    if sorted_arr.size == 0:
        return lax.full(query.shape, 0, dtype)
    if query.ndim > 0:
        return vmap(partial(_searchsorted_scan, side=side, dtype=dtype, unrolled=unrolled),
                    in_axes=(None, 0))(sorted_arr, query)
    op = lax._sort_le_comparator if side == "left" else lax._sort_lt_comparator
    unsigned = np.uint64 if np.iinfo(dtype).bits == 64 else np.uint32

    def body_fun(state, _):
        low, high = state
        mid = low + (high - low) // 2
        go_left = op(query, sorted_arr[mid])
        return (lax.select(go_left, low, mid), lax.select(go_left, mid, high)), ()
    n_levels = int(np.ceil(np.log2(n + 1)))
    carry, _ = lax.scan(body_fun, (unsigned(0), unsigned(n)), (), length=n_levels,
                        unroll=n_levels if unrolled else 1)
    return carry[1].astype(dtype)


_searchsorted_scan = jit_named(_searchsorted_scan_impl, "_searchsorted_scan_impl",
                               ("side", "dtype", "unrolled"))


def _searchsorted_sort_impl(sorted_arr, query, side, dtype):
    working = np.int32 if sorted_arr.size + query.size <= np.iinfo(np.int32).max else np.int64

    def rank(x):
        idx = lax.iota(working, len(x))
        return lax.full_like(idx, 0).at[lax.sort_key_val(x, idx)[1]].set(idx)
    if side == "left":
        index = rank(lax.concatenate([query.ravel(), sorted_arr], 0))[:query.size]
    else:
        index = rank(lax.concatenate([sorted_arr, query.ravel()], 0))[sorted_arr.size:]
    return lax.reshape(lax.sub(index, rank(query.ravel())), np.shape(query)).astype(dtype)


_searchsorted_sort = jit_named(_searchsorted_sort_impl, "_searchsorted_sort_impl",
                               ("side", "dtype"))


def _searchsorted_compare_all_impl(sorted_arr, query, side, dtype):
    op = lax._sort_lt_comparator if side == "left" else lax._sort_le_comparator
    comparisons = vmap(op, in_axes=(0, None))(sorted_arr, query)
    return comparisons.sum(dtype=dtype, axis=0)


_searchsorted_compare_all = jit_named(_searchsorted_compare_all_impl,
                                      "_searchsorted_compare_all_impl", ("side", "dtype"))


def _searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. "
                         "Expected one of ['left', 'right'].")
    if sorter is None:
        a, v = ensure_arraylike("searchsorted", a, v)
    else:
        a, v, sorter = ensure_arraylike("searchsorted", a, v, sorter)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = (lax._lift(x) for x in promote_dtypes(a, v))
    if sorter is not None:
        a = a[sorter]
    dtype = np.dtype(np.int32) if a.shape[0] <= np.iinfo(np.int32).max else np.dtype(np.int64)
    if method == "scan":
        return _searchsorted_scan(a, v, side=side, dtype=dtype, unrolled=False)
    if method == "scan_unrolled":
        return _searchsorted_scan(a, v, side=side, dtype=dtype, unrolled=True)
    if method == "compare_all":
        return _searchsorted_compare_all(a, v, side=side, dtype=dtype)
    if method == "sort":
        return _searchsorted_sort(a, v, side=side, dtype=dtype)
    raise ValueError(f"Unsupported method: {method}")


searchsorted = jit_named(_searchsorted, "searchsorted", ("side", "method"))


def _digitize(x, bins, right=False, *, method=None):
    x, bins_arr = ensure_arraylike("digitize", x, bins)
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins_arr.shape[0] == 0:
        return zeros_like(x, dtype=np.int32)
    side = "right" if not right else "left"
    kw = {} if method is None else {"method": method}
    return _where_public(bins_arr[-1] >= bins_arr[0], searchsorted(bins_arr, x, side=side, **kw),
                         bins_arr.shape[0] - searchsorted(bins_arr[::-1], x, side=side, **kw))


digitize = jit_named(_digitize, "digitize", ("right", "method"))


# -- lexsort, partition, argpartition, sort_complex --------------------------------------------

def _lexsort(keys, axis=-1):
    if hasattr(keys, "aval"):  # an array of keys iterates by index_in_dim, as a JAX tracer does
        keys = tuple(lax.index_in_dim(keys, i, keepdims=False) for i in range(keys.shape[0]))
    keys = tuple(keys)
    key_arrays = tuple(ensure_arraylike("lexsort", k) for k in keys)
    if len(key_arrays) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({np.shape(k) for k in key_arrays}) > 1:
        raise ValueError("all keys need to be the same shape")
    if np.ndim(key_arrays[0]) == 0:
        return lax.full((), 0, dtypes.default_int())
    axis = _canon(axis, np.ndim(key_arrays[0]))
    iota = lax.broadcasted_iota(dtypes.default_int(), np.shape(key_arrays[0]), axis)
    return lax.sort((*key_arrays[::-1], iota), dimension=axis, num_keys=len(key_arrays))[-1]


lexsort = jit_named(_lexsort, "lexsort", ("axis",))


def _partition_prep(name, a, kth, axis):
    arr = ensure_arraylike("partition", a)
    if dtypes.is_complex(lax.dtype_of(arr)):
        raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
    axis = _canon(axis, arr.ndim)
    kth = _canon(kth, arr.shape[axis])
    return arr.swapaxes(axis, -1), kth, axis


def _neg_for_bottom(arr):
    if dtypes.is_unsigned_int(lax.dtype_of(arr)):
        return -(arr + 1)
    return -arr


def _partition(a, kth, axis=-1):
    arr, kth, axis = _partition_prep("partition", a, kth, axis)
    if dtypes.is_unsigned_int(lax.dtype_of(arr)):
        bottom = -lax.top_k(-(arr + 1), kth + 1)[0] - 1
    else:
        bottom = -lax.top_k(-arr, kth + 1)[0]
    top = lax.top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = lax.concatenate([bottom, top], dimension=arr.ndim - 1)
    return out.swapaxes(-1, axis)


def _argpartition(a, kth, axis=-1):
    arr, kth, axis = _partition_prep("argpartition", a, kth, axis)
    bottom_ind = lax.top_k(_neg_for_bottom(arr), kth + 1)[1]

    def set_to_zero(x, i):
        return x.at[i].set(0)
    for _ in range(arr.ndim - 1):
        set_to_zero = vmap(set_to_zero)
    proxy = set_to_zero(lax.full(arr.shape, 1.0), bottom_ind)
    top_ind = lax.top_k(proxy, arr.shape[-1] - kth - 1)[1]
    out = lax.concatenate([bottom_ind, top_ind], dimension=arr.ndim - 1)
    return out.swapaxes(-1, axis)


partition = jit_named(_partition, "partition", ("kth", "axis"))
argpartition = jit_named(_argpartition, "argpartition", ("kth", "axis"))


def _sort_complex(a):
    a = ensure_arraylike("sort_complex", a)
    a = lax.sort(a, dimension=max(a.ndim - 1, 0))
    dt = lax.dtype_of(a)
    if not dtypes.is_complex(dt):
        wide = dtypes.is_float(dt) and np.dtype(dt).itemsize == 8
        dt = np.dtype(np.complex128) if wide else np.dtype(np.complex64)
    return lax.convert_element_type(a, dtypes.canonicalize(dt))


sort_complex = jit_named(_sort_complex, "sort_complex")


# -- extract, compress, select, choose, piecewise, place, put --------------------------------

def extract(condition, arr, *, size=None, fill_value=0):
    condition, arr = ensure_arraylike("extract", condition, arr)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` where ``condition`` holds (``size`` pads/truncates)."""
    condition_arr, arr, fill_value = ensure_arraylike("compress", condition, a, fill_value)
    condition_arr = condition_arr.astype(bool)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if condition_arr.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    condition_arr, extra = condition_arr[:arr.shape[0]], condition_arr[arr.shape[0]:]
    arr = arr[:condition_arr.shape[0]]
    if size is None:
        if _any(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[condition_arr]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array axis;"
                         f" got size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = expand_dims(condition_arr, range(1, arr.ndim))
        arr = _where_public(mask, arr, array(fill_value, dtype=arr.dtype))
        result = arr[argsort(condition_arr, stable=True, descending=True)][:size]
    return moveaxis(result, 0, axis)


def select(condlist, choicelist, default=0):
    """Picks from ``choicelist`` where the first true condition of ``condlist`` holds."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                         f"{len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    condlist = [asarray(c) for c in condlist]
    choicelist = [asarray(c) for c in choicelist]
    default = asarray(default)
    # the default goes first with condition False: argmax of all-False is 0
    choicelist = promote_dtypes(default, *choicelist)
    conditions = stack(broadcast_arrays(False, *condlist))
    idx = argmax(conditions.astype(bool), axis=0)
    return lax.select_n(*broadcast_arrays(idx, *choicelist))


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (modes raise (concrete ``a``), wrap, clip)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a, *choices = (ensure_arraylike("choose", c) for c in (a, *choices))
    if not dtypes.is_int(lax.dtype_of(a)):
        raise ValueError("`a` array must be integer typed")
    N = len(choices)
    if mode == "raise":
        arr = asarray(concrete_or_error(a, "The error occurred because jnp.choose was "
                                        "jit-compiled with mode='raise'. Use mode='wrap' or "
                                        "mode='clip' instead."))
        if _any((arr < 0) | (arr >= N)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = asarray(a) % N
    elif mode == "clip":
        arr = clip(a, 0, N - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arr, *choices = broadcast_arrays(arr, *choices)
    return array(choices)[(arr,) + indices(arr.shape, sparse=True)]


def _piecewise_impl(x, condlist, consts, funcs, *args, **kw):
    funcdict = dict(funcs)
    funclist = [consts.get(i, funcdict.get(i)) for i in range(len(condlist) + 1)]
    indices = argmax(cumsum(concatenate([zeros_like(condlist[:1]), condlist], 0), 0), 0)
    dtype = x.dtype

    def _call(f):
        return lambda v: f(v, *args, **kw).astype(dtype)

    def _const(c):
        return lambda v: array(c, dtype=dtype)
    funclist = [_call(f) if callable(f) else _const(f) for f in funclist]
    return vectorize(lax.switch, excluded=(1,))(indices, funclist, x)


_piecewise = jit_named(_piecewise_impl, "_piecewise", ("funcs",))


def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluates ``funclist[i]`` where ``condlist[i]`` holds (the last true one wins; an extra
    function is the default), through ``switch``."""
    x_arr = ensure_arraylike("piecewise", x)
    nc, nf = len(condlist), len(funclist)
    if nf == nc + 1:
        funclist = list(funclist[-1:]) + list(funclist[:-1])
    elif nf == nc:
        funclist = [0] + list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are "
                         f"expected; got {nf}")
    consts = {i: c for i, c in enumerate(funclist) if not callable(c)}
    funcs = {i: f for i, f in enumerate(funclist) if callable(f)}
    return _piecewise(x_arr, asarray(condlist, dtype=bool), consts, frozenset(funcs.items()),
                      *args, **kw)


def _tile_to_size(arr, size):
    if arr.size < size:
        arr = tile(arr, int(np.ceil(size / arr.size)))
    return arr[:size] if arr.size > size else arr


def place(arr, mask, vals, *, inplace=True):
    """``arr`` with ``vals`` (cycled) written where ``mask`` holds; returns a new array."""
    data, mask_arr, vals_arr = ensure_arraylike("place", arr, mask, vals)
    vals_arr = vals_arr.ravel()
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    indices = _where_public_nonzero(mask_arr.ravel(), mask_arr.size)
    vals_arr = _tile_to_size(vals_arr, len(indices))
    return data.ravel().at[indices].set(vals_arr, mode="drop").reshape(data.shape)


def _where_public_nonzero(mask, size):
    return _numpy__ufuncs.where(mask, size=size, fill_value=size)[0]


def put(a, ind, v, mode=None, *, inplace=True):
    """``a`` with ``a.flat[ind] = v`` (``v`` cycled); returns a new array."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    arr, ind_arr, _ = ensure_arraylike("put", a, ind, v)
    ind_arr = ind_arr.ravel()
    v_arr = ravel(v)
    if not arr.size or not ind_arr.size or not v_arr.size:
        return arr
    v_arr = _tile_to_size(v_arr, len(ind_arr))
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = clip(ind_arr, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ind_arr % arr.size
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)


def _put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arraysare immutable. Pass inplace=False to instead return an updated "
                         "array.")
    arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
    original_axis, original_shape = axis, arr.shape
    if axis is None:
        arr, axis = arr.ravel(), 0
    if not arr.ndim == indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
                         f"arr.ndim={arr.ndim} and indices.ndim={indices.ndim}.")
    try:
        values = broadcast_to(values, indices.shape)
    except ValueError:
        raise ValueError("put_along_axis argument 'values' must be broadcastable to 'indices'. "
                         f"Got values.shape={values.shape} and indices.shape={indices.shape}.")
    if axis < 0:
        axis += arr.ndim
    idx = list(_indices(arr.shape, sparse=True))
    idx[axis] = indices
    result = arr.at[tuple(idx)].set(values, mode=mode)
    if original_axis is None:
        result = result.reshape(original_shape)
    return result


put_along_axis = jit_named(_put_along_axis, "put_along_axis", ("axis", "inplace", "mode"))

import traxla.numpy._ufuncs as _numpy__ufuncs  # noqa: E402  (it imports this module: bound once both are defined)
