"""``bcoo_dot_general``: contractions of a BCOO array with a dense array (either side), as
JAX's ``jax.experimental.sparse.bcoo_dot_general``, composed of gathers, a batched
``dot_general`` and a scatter-add under vmap over the batch dimensions."""
from __future__ import annotations

from functools import partial

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape
from traxla.experimental.sparse.bcoo import BCOO, _validate_bcoo
from traxla.experimental.sparse.util import _remaining, nfold_vmap


def _ensure_index_tuple(x):
    try:
        return (int(x),)
    except TypeError:
        return tuple(int(i) for i in x)


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """A general contraction operation. One operand is a BCOO array, the other an ndarray
    (the result is then dense), or both are BCOO (the result is BCOO)."""
    del precision, out_sharding  # unused, as in JAX
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        from traxla.experimental.sparse.bcoo_spdot import bcoo_spdot_general
        return bcoo_spdot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                                  preferred_element_type=preferred_element_type)
    if isinstance(lhs, BCOO):
        return _bcoo_dot_general(lhs.data, lhs.indices, rhs,
                                 dimension_numbers=dimension_numbers,
                                 preferred_element_type=preferred_element_type,
                                 lhs_spinfo=lhs._info)
    if isinstance(rhs, BCOO):
        return _bcoo_rdot_general(lhs, rhs.data, rhs.indices,
                                  dimension_numbers=dimension_numbers,
                                  preferred_element_type=preferred_element_type,
                                  rhs_spinfo=rhs._info)
    return lax.dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                           preferred_element_type=preferred_element_type)


def _canonical_dimension_numbers(dimension_numbers):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    return ((_ensure_index_tuple(lhs_contract), _ensure_index_tuple(rhs_contract)),
            (_ensure_index_tuple(lhs_batch), _ensure_index_tuple(rhs_batch)))


def _bcoo_dot_general_out_aval(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                               preferred_element_type, lhs_spinfo):
    """The output shape and dtype, with the errors JAX's abstract evaluation raises."""
    out = eval_shape(partial(lax.dot_general, dimension_numbers=dimension_numbers,
                             preferred_element_type=preferred_element_type),
                     ShapeDtypeStruct(tuple(lhs_spinfo.shape), lhs_data.dtype),
                     ShapeDtypeStruct(rhs.shape, rhs.dtype))
    (lhs_contracting, _), (lhs_batch, _) = dimension_numbers
    n_batch, n_sparse, _, _ = _validate_bcoo(lhs_data, lhs_indices, lhs_spinfo.shape)
    if lhs_batch and max(lhs_batch) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation.\ngot lhs_batch={lhs_batch}, n_batch={n_batch}")
    if any(d >= n_batch + n_sparse for d in lhs_contracting):
        raise NotImplementedError("bcoo_dot_general: contracting over dense dimensions.")
    return tuple(out.shape), out.dtype


def _bcoo_dot_general(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                      preferred_element_type, lhs_spinfo):
    lhs_data, lhs_indices, rhs = map(jnp.asarray, (lhs_data, lhs_indices, rhs))
    dimension_numbers = _canonical_dimension_numbers(dimension_numbers)
    if preferred_element_type is not None:
        preferred_element_type = np.dtype(preferred_element_type)
    _bcoo_dot_general_out_aval(lhs_data, lhs_indices, rhs, dimension_numbers=dimension_numbers,
                               preferred_element_type=preferred_element_type,
                               lhs_spinfo=lhs_spinfo)
    return _bcoo_dot_general_impl(lhs_data, lhs_indices, rhs,
                                  dimension_numbers=dimension_numbers,
                                  preferred_element_type=preferred_element_type,
                                  lhs_spinfo=lhs_spinfo)


@partial(jit, static_argnames=("dimension_numbers", "preferred_element_type", "lhs_spinfo"))
def _bcoo_dot_general_impl(lhs_data, lhs_indices, rhs, *, dimension_numbers,
                           preferred_element_type, lhs_spinfo):
    out_shape, out_dtype = _bcoo_dot_general_out_aval(
        lhs_data, lhs_indices, rhs, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type, lhs_spinfo=lhs_spinfo)
    n_sparse = lhs_indices.shape[-1]
    n_batch = lhs_indices.ndim - 2
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    pairs = list(zip(lhs_contracting, rhs_contracting))
    lhs_contracting_b = tuple(l for l, r in pairs if l < n_batch)
    rhs_contracting_b = tuple(r for l, r in pairs if l < n_batch)
    lhs_contracting_s = tuple(l for l, r in pairs if l >= n_batch)
    rhs_contracting_s = tuple(r for l, r in pairs if l >= n_batch)

    # Reorder lhs batch dimensions: output batch, then free batch, then contracted batch.
    if lhs_batch or lhs_contracting_b:
        batch_perm = [*lhs_batch, *_remaining(range(n_batch), lhs_batch, lhs_contracting_b),
                      *lhs_contracting_b]
        lhs_data = lhs_data.transpose([*batch_perm, *range(n_batch, lhs_data.ndim)])
        lhs_indices = lhs_indices.transpose([*batch_perm, *range(n_batch, lhs_indices.ndim)])
    # Reorder lhs sparse dimensions: contracted first.
    if lhs_contracting_s:
        lhs_contracting_s = tuple(d - n_batch for d in lhs_contracting_s)
        sparse_perm = jnp.array([*lhs_contracting_s,
                                 *_remaining(range(n_sparse), lhs_contracting_s)])
        lhs_indices = lhs_indices[..., sparse_perm]
    rhs_perm = [*rhs_batch, *rhs_contracting_b, *rhs_contracting_s,
                *_remaining(range(rhs.ndim), rhs_batch, rhs_contracting)]
    rhs = rhs.transpose(rhs_perm)

    def result(out_array, lhs_data, lhs_indices, rhs):
        idx = tuple(lhs_indices[..., i] for i in range(n_sparse))
        idx_right = idx[:len(lhs_contracting_s)]
        idx_out = idx[len(lhs_contracting_s):]
        if idx_right and lhs_indices.ndim > 2:
            idx_batch = jnp.meshgrid(*(jnp.arange(n) for n in lhs_indices.shape[:-1]),
                                     indexing="ij")[:lhs_indices.ndim - 2]
            idx_right = (*idx_batch, *idx_right)
        batch_dims = list(range(len(lhs_contracting_b) + bool(lhs_contracting_s)))
        prod = lax.dot_general(lhs_data, rhs.at[idx_right].get(mode="fill", fill_value=0),
                               (([], []), (batch_dims, batch_dims)),
                               preferred_element_type=preferred_element_type)
        if idx_out:
            return out_array.at[idx_out].add(prod)
        return prod.sum(tuple(range(prod.ndim - out_array.ndim)), dtype=out_array.dtype)
    result = nfold_vmap(result, n_batch - len(lhs_contracting_b))
    rhs = lax.expand_dims(rhs, range(len(rhs_batch), n_batch - len(lhs_contracting_b)))
    out_array = jnp.zeros(out_shape, out_dtype)
    return result(out_array, lhs_data, lhs_indices, rhs)


def _bcoo_rdot_general(lhs, rhs_data, rhs_indices, *, dimension_numbers,
                       preferred_element_type, rhs_spinfo):
    dimension_numbers = _canonical_dimension_numbers(dimension_numbers)
    reversed_dn = tuple(d[::-1] for d in dimension_numbers)
    result = _bcoo_dot_general(rhs_data, rhs_indices, lhs, lhs_spinfo=rhs_spinfo,
                               dimension_numbers=reversed_dn,
                               preferred_element_type=preferred_element_type)
    n_contract, n_batch = (len(d[0]) for d in dimension_numbers)
    n_swap = len(rhs_spinfo.shape) - n_contract
    permutation = (*range(n_batch), *range(n_swap, result.ndim), *range(n_batch, n_swap))
    return lax.transpose(result, permutation)


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """A contraction of dense ``A`` and ``B`` computed at the given BCOO ``indices`` only:
    the BCOO data of ``dot_general(A, B)`` there. (JAX computes small cases without the
    dense product; the values are the same.)"""
    from traxla.experimental.sparse.bcoo import _bcoo_extract
    dimension_numbers = _canonical_dimension_numbers(dimension_numbers)
    dense = lax.dot_general(jnp.asarray(A), jnp.asarray(B), dimension_numbers=dimension_numbers,
                            precision=lax.Precision.HIGHEST)
    return _bcoo_extract(jnp.asarray(indices), dense)
