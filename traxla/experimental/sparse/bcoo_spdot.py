"""``bcoo_dot_general`` of two BCOO arrays (JAX's ``bcoo_spdot_general``): an outer product
of the stored elements masked where the contracted indices agree, then duplicates summed
into a static ``nse``; batch dimensions by vmap."""
from __future__ import annotations

import math
from functools import partial

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape
from traxla.experimental.sparse.bcoo import BCOO, _bcoo_sum_duplicates, _validate_bcoo
from traxla.experimental.sparse.util import SparseInfo, _remaining, nfold_vmap


def bcoo_spdot_general(lhs, rhs, *, dimension_numbers, preferred_element_type=None):
    out_shape, out_dtype, out_nse = _bcoo_spdot_general_out_info(
        lhs, rhs, dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type)
    dimension_numbers = tuple(tuple(tuple(int(d) for d in ds) for ds in pair)
                              for pair in dimension_numbers)
    data, indices = _bcoo_spdot_general_impl(
        lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_spinfo=lhs._info,
        rhs_spinfo=rhs._info, dimension_numbers=dimension_numbers, out_nse=out_nse)
    if preferred_element_type is not None or data.dtype != out_dtype:
        data = data.astype(out_dtype)
    return BCOO((data, indices), shape=out_shape)


@partial(jit, static_argnames=("lhs_spinfo", "rhs_spinfo", "dimension_numbers", "out_nse"))
def _bcoo_spdot_general_impl(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                             rhs_spinfo, dimension_numbers, out_nse):
    lhs = BCOO((lhs_data, lhs_indices), shape=lhs_spinfo.shape)
    rhs = BCOO((rhs_data, rhs_indices), shape=rhs_spinfo.shape)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    lb, rb = lhs.n_batch, rhs.n_batch
    lhs_perm = [*lhs_batch, *_remaining(range(lb), lhs_batch)]
    rhs_perm = [*rhs_batch, *_remaining(range(rb), rhs_batch)]
    lhs_data = lhs.data.transpose([*lhs_perm, *range(lb, lhs.data.ndim)])
    rhs_data = rhs.data.transpose([*rhs_perm, *range(rb, rhs.data.ndim)])
    lhs_indices = lhs.indices.transpose([*lhs_perm, *range(lb, lhs.indices.ndim)])
    rhs_indices = rhs.indices.transpose([*rhs_perm, *range(rb, rhs.indices.ndim)])
    func = partial(_bcoo_spdot_general_unbatched,
                   lhs_shape=lhs.shape[lb:], rhs_shape=rhs.shape[rb:],
                   lhs_contracting=[d - lb for d in lhs_contracting],
                   rhs_contracting=[d - rb for d in rhs_contracting], out_nse=out_nse)
    func = nfold_vmap(func, rb - len(rhs_batch), in_axes=(None, None, 0, 0))
    func = nfold_vmap(func, lb - len(lhs_batch), in_axes=(0, 0, None, None))
    func = nfold_vmap(func, len(lhs_batch))
    data, indices = func(lhs_data, lhs_indices, rhs_data, rhs_indices)
    return data, indices


def _bcoo_spdot_general_out_info(lhs, rhs, *, dimension_numbers, preferred_element_type):
    """Output shape, dtype and nse, with the errors of JAX's abstract evaluation."""
    out = eval_shape(partial(lax.dot_general, dimension_numbers=dimension_numbers,
                             preferred_element_type=preferred_element_type),
                     ShapeDtypeStruct(lhs.shape, lhs.dtype),
                     ShapeDtypeStruct(rhs.shape, rhs.dtype))
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if ((lhs_batch and max(lhs_batch) >= lhs.n_batch)
            or (rhs_batch and max(rhs_batch) >= rhs.n_batch)):
        raise NotImplementedError("bcoo_spdot_general: batch_dims must correspond to batch "
                                  "dimensions of the sparse representation.")
    for m, c in ((lhs, lhs_contracting), (rhs, rhs_contracting)):
        if c and (min(c) < m.n_batch or max(c) >= m.n_batch + m.n_sparse):
            raise NotImplementedError("bcoo_spdot_general only supports contraction of "
                                      "sparse indices.")
    if rhs.n_batch > len(rhs_batch) and lhs.n_sparse > len(lhs_contracting):
        raise ValueError("bcoo_spdot_general: cannot have unused batch dims on rhs with "
                         "unused sparse dims on lhs.")
    out_nse = ((lhs.nse if lhs.n_sparse > len(lhs_contracting) else 1) *
               (rhs.nse if rhs.n_sparse > len(rhs_contracting) else 1))
    out_n_batch = lhs.n_batch + rhs.n_batch - len(lhs_batch)
    out_nse = min(out_nse, math.prod(out.shape[out_n_batch:]))
    return tuple(out.shape), out.dtype, out_nse


def _bcoo_spdot_general_unbatched(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_shape,
                                  rhs_shape, lhs_contracting, rhs_contracting, out_nse):
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    out_shape = (*(s for i, s in enumerate(lhs_shape) if i not in lhs_contracting),
                 *(s for i, s in enumerate(rhs_shape) if i not in rhs_contracting))
    lhs_i = lhs_indices[:, jnp.array(lhs_contracting, dtype=int)]
    rhs_i = rhs_indices[:, jnp.array(rhs_contracting, dtype=int)]
    lhs_j = lhs_indices[:, jnp.array(_remaining(range(lhs.n_sparse), lhs_contracting), dtype=int)]
    rhs_j = rhs_indices[:, jnp.array(_remaining(range(rhs.n_sparse), rhs_contracting), dtype=int)]
    overlap = (lhs_i[:, None] == rhs_i[None, :]).all(-1)
    lhs_fill = jnp.expand_dims(jnp.array([lhs_shape[d] for d in lhs_contracting],
                                         dtype=lhs_i.dtype), range(lhs_i.ndim - 1))
    rhs_fill = jnp.expand_dims(jnp.array([rhs_shape[d] for d in rhs_contracting],
                                         dtype=rhs_i.dtype), range(rhs_i.ndim - 1))
    lhs_valid = (lhs_i < lhs_fill).all(-1)
    rhs_valid = (rhs_i < rhs_fill).all(-1)
    out_data = jnp.where(overlap & lhs_valid[:, None] & rhs_valid[None, :],
                         lhs_data[:, None] * rhs_data[None, :], 0).ravel()
    n_lj = lhs_j.shape[-1]
    out_indices = jnp.zeros([lhs.nse, rhs.nse, n_lj + rhs_j.shape[-1]],
                            dtype=jnp.result_type(lhs_indices, rhs_indices))
    out_indices = out_indices.at[:, :, :n_lj].set(lhs_j[:, None])
    out_indices = out_indices.at[:, :, n_lj:].set(rhs_j[None, :])
    out_indices = out_indices.reshape(len(out_data), out_indices.shape[-1])
    return _bcoo_sum_duplicates(out_data, out_indices, spinfo=SparseInfo(shape=out_shape),
                                nse=out_nse)
