"""Permutations, choices and categorical sampling (JAX's ``permutation``, ``choice`` and
``categorical``: repeated stable sorts by random keys, inverse-CDF draws, Gumbel-max and
Gumbel-top-k), bit-for-bit as JAX's."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.ir import dtypes
from traxla.numpy._promotion import check_arraylike, promote_dtypes_inexact
from traxla.numpy._shape import canonicalize_axis
from traxla.tracer import Tracer
from traxla.random import (_astype, _canonicalize_shape, _check_prng_key, _check_shape,
               _ndim, _random_bits, _shape, _split, _unstack, gumbel, randint, uniform)
from traxla.ir.rules import indexing
from traxla.lowering.registry import lowering_rules


# -- permutations and choices -----------------------------------------------------------

_MISSING = ("traxla.random.{fn} needs the `{prim}` primitive ({what}), which traxla does not "
            "provide yet.")


def _sort_key_val(keys, values, dimension):
    """``lax.sort_key_val``: ``values`` reordered by a stable ascending sort of ``keys``."""
    fn = getattr(lax, "sort_key_val", None)
    if fn is not None:
        return fn(keys, values, dimension)
    sort_p = getattr(indexing, "sort_p", None)
    if sort_p is None or sort_p not in lowering_rules:
        raise NotImplementedError(_MISSING.format(fn="permutation/choice", prim="sort",
                                                  what="lax.sort_key_val"))
    return sort_p.bind(keys, values, dimension=int(dimension), is_stable=True, num_keys=1)


def _indexing_prim(name, fn, what):
    prim = getattr(indexing, "P", {}).get(name)
    if prim is None or prim not in lowering_rules:
        raise NotImplementedError(_MISSING.format(fn=fn, prim=name, what=what))
    return prim, indexing


def _take(x, ind, axis, name):
    """``jnp.take(x, ind, axis)`` for in-range indices."""
    take = getattr(jnp, "take", None)
    if take is not None:
        return take(x, ind, axis=axis)
    gather_p, indexing = _indexing_prim("gather", name, "jnp.take")
    xshape, ishape = _shape(x), _shape(ind)
    r, q = len(xshape), len(ishape)
    dnums = indexing.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + q, r - 1 + q)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    slice_sizes = tuple(1 if d == axis else s for d, s in enumerate(xshape))
    return gather_p.bind(x, lax.expand_dims(ind, (q,)), dimension_numbers=dnums,
                         slice_sizes=slice_sizes, indices_are_sorted=False,
                         unique_indices=False, mode=indexing.GatherScatterMode.PROMISE_IN_BOUNDS,
                         fill_value=None)


def _cumsum(x):
    fn = getattr(jnp, "cumsum", None)
    if fn is not None:
        return fn(x)
    cumsum_p, _ = _indexing_prim("cumsum", "choice(p=...)", "jnp.cumsum")
    return cumsum_p.bind(x, axis=0, reverse=False)


def permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` (an int) or of ``x`` along ``axis``."""
    key, _ = _check_prng_key("permutation", key)
    check_arraylike("permutation", x)
    axis = canonicalize_axis(axis, _ndim(x) or 1)
    if not _ndim(x):
        if not dtypes.is_int(lax.dtype_of(x)):
            raise TypeError("x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            raise TypeError("argument x of jax.random.permutation() must be concrete: got a "
                            f"traced value {x}; pass a Python int.")
        r = int(x)
        return _shuffle(key, jnp.arange(r), axis)
    return _permutation(key, x, axis, independent)


def _permutation(key, x, axis, independent):
    if independent or _ndim(x) == 1:
        return _shuffle(key, x, axis)
    if getattr(jnp, "take", None) is not None:
        ind = _shuffle(key, jnp.arange(_shape(x)[axis]), 0)
        return jnp.take(x, ind, axis, unique_indices=True)
    # Without gather: the same stable sorts applied to x's slices along `axis` (the keys
    # broadcast across the other dims) move them exactly as taking the shuffled arange would.
    return _shuffle_slices(key, x, axis)


def _num_rounds(size):
    exponent = 3  # tjablin@'s analysis (see JAX's _shuffle)
    uint32max = np.iinfo(np.uint32).max
    return int(np.ceil(exponent * np.log(max(1, size)) / np.log(uint32max)))


def _shuffle(key, x, axis):
    # Sorting by random 32-bit keys, repeated with fresh keys often enough that all keys are
    # distinct with high probability (JAX's algorithm).
    for _ in range(_num_rounds(math.prod(_shape(x)))):
        key, subkey = _unstack(_split(key))
        sort_keys = _random_bits(subkey, 32, _shape(x))
        _, x = _sort_key_val(sort_keys, x, axis)
    return x


_shuffle = jit(_shuffle, static_argnums=(2,))


def _shuffle_slices(key, x, axis):
    n = _shape(x)[axis]
    for _ in range(_num_rounds(n)):
        key, subkey = _unstack(_split(key))
        sort_keys = _random_bits(subkey, 32, (n,))
        shape = _shape(x)
        sort_keys = lax.broadcast_in_dim(sort_keys, shape, (axis,))
        _, x = _sort_key_val(sort_keys, x, axis)
    return x


_shuffle_slices = jit(_shuffle_slices, static_argnums=(2,))


def _top_k_indices(x, k):
    """Indices of the ``k`` largest entries along the last axis, largest first (ties: lower
    index first), as ``lax.top_k(x, k)[1]``."""
    top_k = getattr(lax, "top_k", None)
    if top_k is not None:
        return top_k(x, k)[1]
    shape = _shape(x)
    iota = lax.broadcasted_iota(dtypes.int32, shape, len(shape) - 1)
    # A stable ascending sort of -x is a descending sort of x with ties in index order.
    _, idx = _sort_key_val(lax.neg(x), iota, len(shape) - 1)
    return lax.slice_in_dim(idx, 0, k, axis=len(shape) - 1)


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample of ``a`` (an array, or an int meaning ``arange(a)``)."""
    key, _ = _check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if _ndim(arr) == 0:
        if isinstance(a, Tracer):
            raise TypeError("The error occurred in jax.random.choice(): `a` must be concrete "
                            f"when it is a scalar, got a traced value {a}.")
        n_inputs = int(a)
    else:
        axis = canonicalize_axis(axis, _ndim(arr))
        n_inputs = _shape(arr)[axis]
    shape = _canonicalize_shape(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=lax.dtype_of(arr))
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")

    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if _ndim(arr) == 0 else _take(arr, ind, axis, "choice")
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if _ndim(arr) == 0 else arr, axis)[slices]
    else:
        check_arraylike("choice", p)
        p_arr, = promote_dtypes_inexact(p)
        if _shape(p_arr) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {_shape(p_arr)} and a.shape[axis] is {n_inputs}.")
        if replace:
            p_cuml = _cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=lax.dtype_of(p_cuml)))
            ind = _astype(_searchsorted_left(p_cuml, r), int)
        else:
            # Gumbel top-k trick.
            g = gumbel(key, (n_inputs,), dtype=lax.dtype_of(p_arr), mode=mode) + jnp.log(p_arr)
            ind = _astype(_top_k_indices(g, n_draws), int)
        result = ind if _ndim(arr) == 0 else _take(arr, ind, axis, "choice")

    out_shape = (shape if _ndim(arr) == 0 else
                 _shape(arr)[0:axis] + tuple(shape) + _shape(arr)[axis + 1:])
    return result.reshape(out_shape)


def _searchsorted_left(sorted_arr, query):
    """``jnp.searchsorted(sorted_arr, query)`` (side='left'): the number of entries
    strictly below each query (the same index for a sorted array)."""
    fn = getattr(jnp, "searchsorted", None)
    if fn is not None:
        return fn(sorted_arr, query)
    q = jnp.expand_dims(query, -1)
    return jnp.sum(_astype(sorted_arr < q, dtypes.default_int()), axis=-1)


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Indices drawn from categorical distributions given by unnormalized log-probabilities."""
    key, _ = _check_prng_key("categorical", key)
    check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    lshape = _shape(logits_arr)
    batch_shape = tuple(np.delete(np.array(lshape, dtype=np.int64), axis).tolist())
    if shape is None:
        shape = batch_shape
    else:
        shape = _canonicalize_shape(shape)
        _check_shape("categorical", shape, batch_shape)
    return _categorical(key, logits_arr, shape, batch_shape, axis, replace, mode)


def _categorical(key, logits_arr, shape, batch_shape, axis, replace, mode):
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    lshape = _shape(logits_arr)
    if replace:
        if axis >= 0:
            axis -= len(lshape)
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % len(lshape), lshape[axis])
        return jnp.argmax(
            gumbel(key, (*shape_prefix, *logits_shape), lax.dtype_of(logits_arr), mode=mode)
            + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))),
            axis=axis)
    logits_arr = logits_arr + gumbel(key, lshape, lax.dtype_of(logits_arr), mode=mode)
    k = math.prod(shape_prefix)
    if k > lshape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number of "
                         f"categories ({lshape[axis]}).")
    indices = _top_k_indices(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (len(_shape(indices)) - 1, *range(len(_shape(indices)) - 1))
    return lax.reshape(indices, shape, dimensions)
