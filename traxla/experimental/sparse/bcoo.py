"""BCOO (batched coordinate) sparse arrays, as JAX's ``jax.experimental.sparse.bcoo``.

traxla builds each BCOO operation as a composition of its ``lax``/``numpy`` operations
(gather, scatter-add, sort, dot_general, vmap) behind JAX's function names, where JAX binds
one primitive per operation (``bcoo_todense``, ``bcoo_dot_general``...) whose implementation
is the same composition. Values, shapes, index order and padding match JAX's; ``jit``,
``grad`` (with respect to ``data`` and dense operands) and ``vmap`` of dense operands come
from the composed operations' own rules."""
from __future__ import annotations

import math
import operator
from functools import partial
from typing import NamedTuple

import numpy as np

from traxla import dtypes, lax, numpy as jnp
from traxla.api import jit
from traxla.errors import ConcretizationTypeError
from traxla.experimental.sparse._base import _BufferedSparse, _register_vmappable
from traxla.experimental.sparse.util import (_count_stored_elements,
                                             nfold_vmap)
from traxla.tracer import Tracer
from traxla.tree_util import register_pytree_node_class


class BCOOProperties(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def _concrete_int(value, context):
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise ConcretizationTypeError(
                "Abstract tracer value encountered where concrete value is expected: "
                f"{value._error_repr()}\n{context}")
        value = concrete
    return operator.index(value)


def _validate_bcoo_indices(indices, shape) -> BCOOProperties:
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"BCOO indices must have an integer dtype, got {indices.dtype}")
    shape = tuple(shape)
    if len(indices.shape) < 2:
        raise ValueError(f"BCOO indices must have at least 2 dimensions, got {indices.shape=}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = len(indices.shape) - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"Invalid {indices.shape=} for {shape=}: more batch and sparse "
                         "dimensions than the array has")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"indices batch dimensions not compatible for {indices.shape=}, {shape=}")
    return BCOOProperties(n_batch=n_batch, n_sparse=n_sparse, n_dense=n_dense, nse=nse)


def _validate_bcoo(data, indices, shape) -> BCOOProperties:
    props = _validate_bcoo_indices(indices, shape)
    n_batch, n_sparse, n_dense, nse = props
    shape = tuple(shape)
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"data batch dimensions not compatible for {data.shape=}, {shape=}")
    if tuple(data.shape[n_batch:]) != (nse,) + shape[n_batch + n_sparse:]:
        raise ValueError(f"Invalid {data.shape=} for {nse=}, {n_batch=}, {n_dense=}")
    return props


def _staged(*static_argnames):
    """Compile an operation as one nested jit (JAX binds one primitive per operation): one
    program per static configuration when called eagerly, one call in a traced jaxpr."""
    return lambda fn: jit(fn, static_argnames=static_argnames)


def _tuple_replace(tup, ind, val):
    return tuple(val if i == ind else t for i, t in enumerate(tup))


def _batch_and_sparse_index(indices, shape, n_batch, n_sparse):
    """The index tuple addressing ``shape`` at every stored element: broadcast batch
    positions, then one array per sparse dimension (JAX's todense/extract indexing)."""
    slices = tuple(np.zeros(s, int) if i_s == 1 else np.arange(s)
                   for s, i_s in zip(shape[:n_batch], indices.shape[:n_batch]))
    grid = tuple(np.meshgrid(*slices, indexing="ij", sparse=True))
    sparse_ind = tuple(indices[grid + (slice(None), i)] for i in range(n_sparse))
    batch_grid = np.meshgrid(*(np.arange(s) for s in shape[:n_batch]), np.arange(1),
                             indexing="ij", sparse=True)
    return tuple(batch_grid)[:-1], sparse_ind


# ----------------------------------------------------------------------------------------
# todense / fromdense / extract

def bcoo_todense(mat):
    """Convert batched sparse matrix to a dense matrix."""
    return _bcoo_todense(mat.data, mat.indices, spinfo=mat._info)


@_staged("spinfo")
def _bcoo_todense(data, indices, *, spinfo):
    data, indices = jnp.asarray(data), jnp.asarray(indices)
    shape = tuple(spinfo.shape)
    n_batch, n_sparse, _, _ = _validate_bcoo(data, indices, shape)
    batch_ind, sparse_ind = _batch_and_sparse_index(indices, shape, n_batch, n_sparse)
    if not sparse_ind:
        data = data.sum(n_batch, keepdims=bool(batch_ind), dtype=data.dtype)
    return jnp.zeros(shape, data.dtype).at[batch_ind + sparse_ind].add(data)


_TRACED_NSE_ERROR = """
The error arose for the nse argument of bcoo_fromdense. In order for
BCOO.fromdense() to be used in traced/compiled code, you must pass a concrete
value to the nse (number of stored elements) argument.
"""


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """Create BCOO-format sparse matrix from a dense matrix."""
    mat = jnp.asarray(mat)
    nse_arr = nse
    if nse_arr is None:
        nse_arr = _count_stored_elements(mat, n_batch, n_dense)
    nse_int = _concrete_int(nse_arr, _TRACED_NSE_ERROR)
    return BCOO(_bcoo_fromdense(mat, nse=nse_int, n_batch=n_batch, n_dense=n_dense,
                                index_dtype=index_dtype),
                shape=mat.shape, indices_sorted=True, unique_indices=True)


def _bcoo_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    mat = jnp.asarray(mat)
    nse = _concrete_int(nse, _TRACED_NSE_ERROR)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or mat.ndim - n_dense - n_batch < 0:
        raise ValueError(f"Invalid {n_batch=}, {n_dense=} for array of shape {mat.shape}")
    if nse < 0:
        raise ValueError(f"nse must be non-negative, got {nse=}")
    return _bcoo_fromdense_impl(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                index_dtype=np.dtype(index_dtype))


@_staged("nse", "n_batch", "n_dense", "index_dtype")
def _bcoo_fromdense_impl(mat, *, nse, n_batch, n_dense, index_dtype):
    n_sparse = mat.ndim - n_dense - n_batch
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any([-(i + 1) for i in range(n_dense)])

    @partial(nfold_vmap, N=n_batch, broadcasted=False)
    def _nonzero(a):
        if a.ndim:
            return jnp.nonzero(a, size=nse, fill_value=a.shape[:n_sparse])
        return ()
    found = _nonzero(mask)
    if not found:
        indices = jnp.zeros(mask.shape[:n_batch] + (nse, 0), index_dtype)
    else:
        indices = jnp.moveaxis(jnp.array(found, index_dtype), 0, n_batch + 1)
    data = _bcoo_extract(indices, mat)
    true_nse = mask.sum(list(range(n_batch, mask.ndim)))[..., None]
    true_nonzeros = lax.broadcasted_iota(true_nse.dtype, (1,) * n_batch + (nse,), n_batch) < true_nse
    true_nonzeros = true_nonzeros[(n_batch + 1) * (slice(None),) + n_dense * (None,)]
    data = jnp.where(true_nonzeros, data, 0)
    return data, indices


def bcoo_extract(sparr, arr, *, assume_unique=None):
    """Extract values from a dense array according to the sparse array's indices."""
    if not isinstance(sparr, BCOO):
        raise TypeError("First argument to bcoo_extract should be a BCOO array. "
                        f"Got type(sparr)={type(sparr)}")
    a = jnp.asarray(arr)
    if a.shape != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} a.shape={a.shape}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _bcoo_extract(sparr.indices, a, assume_unique=assume_unique)
    return BCOO((data, sparr.indices), **sparr._info._asdict())


@_staged("assume_unique")
def _bcoo_extract(indices, arr, *, assume_unique=True):
    arr = jnp.asarray(arr)
    props = _validate_bcoo_indices(indices, arr.shape)
    original_props = props
    if not assume_unique:
        indices, sort_ind = _unique_indices(indices, shape=arr.shape, return_index=True)
        props = _validate_bcoo_indices(indices, arr.shape)
    batch_ind, sparse_ind = _batch_and_sparse_index(indices, arr.shape, props.n_batch,
                                                    props.n_sparse)
    if not sparse_ind + batch_ind:
        result = arr[None]
    else:
        result = arr.at[batch_ind + sparse_ind].get(mode="fill", fill_value=0)
    if props.n_sparse == 0 and props.nse != 1:
        if assume_unique:
            result = lax.broadcast_in_dim(
                result, _tuple_replace(result.shape, props.n_batch, props.nse),
                range(result.ndim))
        else:
            out_shape = _tuple_replace(result.shape, props.n_batch, original_props.nse)
            ind = props.n_batch * (slice(None),) + (slice(1),)
            result = jnp.zeros_like(result, shape=out_shape).at[ind].set(result)
    if not assume_unique:
        unbatched_out_shape = (original_props.nse, *result.shape[props.n_batch + 1:])

        def f(r, i):
            return jnp.zeros_like(r, shape=unbatched_out_shape).at[i].add(r)
        result = nfold_vmap(f, props.n_batch, broadcasted=False)(result, sort_ind)
    return result


# ----------------------------------------------------------------------------------------
# transpose

def _validate_permutation(data, indices, permutation, shape):
    if not isinstance(permutation, (tuple, list, np.ndarray)):
        raise TypeError("transpose permutation must be a tuple/list/ndarray, "
                        f"got {type(permutation)}.")
    if tuple(sorted(permutation)) != tuple(range(len(shape))):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {permutation} for shape {shape}.")
    n_batch, n_sparse, n_dense, _ = _validate_bcoo(data, indices, shape)
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch: n_batch + n_sparse]]
    dense_perm = [p - n_sparse - n_batch for p in permutation[n_batch + n_sparse:]]
    if n_batch and tuple(sorted(batch_perm)) != tuple(range(n_batch)):
        raise NotImplementedError("transpose permutation cannot permute batch axes with "
                                  f"non-batch axes; got permutation {permutation}, with "
                                  f"n_batch={n_batch}.")
    if n_dense and tuple(sorted(dense_perm)) != tuple(range(n_dense)):
        raise NotImplementedError("transpose permutation cannot permute dense axes with "
                                  f"non-dense axes; got permutation {permutation}, with "
                                  f"n_dense={n_dense}.")
    return batch_perm, sparse_perm, dense_perm


def bcoo_transpose(mat, *, permutation):
    """Transpose a BCOO-format array."""
    buffers = _bcoo_transpose(mat.data, mat.indices, permutation=permutation, spinfo=mat._info)
    out_shape = tuple(mat.shape[p] for p in permutation)
    return BCOO(buffers, shape=out_shape, unique_indices=mat.unique_indices)


def _bcoo_transpose(data, indices, *, permutation, spinfo):
    permutation = tuple(permutation)
    batch_perm, sparse_perm, dense_perm = _validate_permutation(data, indices, permutation,
                                                                spinfo.shape)
    if permutation == tuple(range(len(spinfo.shape))):
        return data, indices
    n_batch = len(batch_perm)
    indices = indices[..., np.array(sparse_perm, int)].transpose(*batch_perm, n_batch,
                                                                 n_batch + 1)
    data = data.transpose(*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
    return data, indices


# ----------------------------------------------------------------------------------------
# sort / sum duplicates

def bcoo_sort_indices(mat):
    """Sort indices of a BCOO array."""
    data, indices = _bcoo_sort_indices(mat.data, mat.indices, spinfo=mat._info)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


@_staged("spinfo")
def _bcoo_sort_indices(data, indices, *, spinfo):
    props = _validate_bcoo(data, indices, spinfo.shape)
    if props.n_sparse == 0:
        return data, indices
    f = nfold_vmap(_bcoo_sort_indices_unbatched, props.n_batch, broadcasted=False)
    indices, perm = f(indices)
    data = nfold_vmap(lambda d, p: d[p], props.n_batch)(data, perm)
    return data, indices


def _bcoo_sort_indices_unbatched(indices):
    nse, n = indices.shape
    cols = tuple(indices[:, i] for i in range(n))
    *cols, perm = lax.sort((*cols, lax.iota(indices.dtype, nse)), num_keys=n)
    return jnp.column_stack(cols), perm


def bcoo_sum_duplicates(mat, nse=None):
    """Sums duplicate indices within a BCOO array, returning an array with sorted indices."""
    data, indices = _bcoo_sum_duplicates(mat.data, mat.indices, spinfo=mat._info, nse=nse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def _bcoo_sum_duplicates(data, indices, *, spinfo, nse):
    context = "nse argument of bcoo_sum_duplicates."
    if nse is not None:
        nse = _concrete_int(nse, context)
    elif _validate_bcoo(data, indices, spinfo.shape).n_sparse == 0:
        nse = 1
    else:  # the true number of unique indices: needs concrete indices
        *_, nse_batched = _unique_indices(indices, shape=spinfo.shape, return_true_size=True)
        nse = _concrete_int(nse_batched.max(), context)
    return _bcoo_sum_duplicates_impl(data, indices, spinfo=spinfo, nse=nse)


@_staged("spinfo", "nse")
def _bcoo_sum_duplicates_impl(data, indices, *, spinfo, nse):
    props = _validate_bcoo(data, indices, spinfo.shape)
    indices_out, mapping = _unique_indices(indices, shape=spinfo.shape, return_inverse=True)
    indices_out = _adjust_indices_nse(indices_out, nse=nse, shape=spinfo.shape)
    if props.n_sparse == 0:
        data = data.sum(props.n_batch, keepdims=True, dtype=data.dtype)
    data_out = jnp.zeros((*map(max, indices.shape[:props.n_batch], data.shape[:props.n_batch]),
                          nse, *data.shape[props.n_batch + 1:]), dtype=data.dtype)
    permute = nfold_vmap(lambda d_out, m, d: d_out.at[m].add(d, mode="drop"), props.n_batch)
    return permute(data_out, mapping, data), indices_out


def _adjust_indices_nse(indices, *, nse, shape):
    props = _validate_bcoo_indices(indices, shape)
    if nse <= props.nse:
        return indices[..., :nse, :]
    fill = lax.broadcast_in_dim(
        jnp.array(shape[props.n_batch:props.n_batch + props.n_sparse], dtype=indices.dtype),
        (*indices.shape[:-2], nse - props.nse, indices.shape[-1]), (indices.ndim - 1,))
    return lax.concatenate([indices, fill], dimension=indices.ndim - 2)


def _unique_indices(indices, *, shape, return_inverse=False, return_index=False,
                    return_true_size=False):
    props = _validate_bcoo_indices(indices, shape)
    f = partial(_unique_indices_unbatched, shape=shape[props.n_batch:],
                return_inverse=return_inverse, return_index=return_index,
                return_true_size=return_true_size)
    return nfold_vmap(f, props.n_batch, broadcasted=False)(indices)


def _unique_indices_unbatched(indices, *, shape, return_inverse=False, return_index=False,
                              return_true_size=False):
    from traxla.numpy._setops import _unique
    props = _validate_bcoo_indices(indices, shape)
    if props.n_sparse == 0:
        out = (jnp.zeros_like(indices, shape=(1, 0)),)
        if return_index:
            out = (*out, jnp.zeros(1, dtype="int32"))
        if return_inverse:
            out = (*out, jnp.zeros(1, dtype="int32"))
        if return_true_size:
            out = (*out, 1)
        return out[0] if len(out) == 1 else out
    fill_value = jnp.expand_dims(jnp.array(shape[:props.n_sparse], dtype=indices.dtype), (0,))
    out_of_bounds = (indices >= fill_value).any(-1, keepdims=True)
    indices = jnp.where(out_of_bounds, fill_value, indices)
    out = _unique(indices, axis=0, return_inverse=return_inverse, return_index=return_index,
                  return_true_size=return_true_size, size=props.nse, fill_value=fill_value)
    if return_inverse:
        idx = 2 if return_index else 1
        out = (*out[:idx], out[idx].ravel(), *out[idx + 1:])
    if return_true_size:
        nse = out[-1]
        nse = nse - (indices == fill_value).any().astype(nse.dtype)
        out = (*out[:-1], nse)
    return out


def bcoo_eliminate_zeros(mat, nse=None):
    data, indices, shape = mat.data, mat.indices, mat.shape
    props = _validate_bcoo(data, indices, shape)
    mask = (data == 0).all(tuple(range(props.n_batch + 1, data.ndim)))
    dims_to_contract = tuple(i for i, s in enumerate(indices.shape[:props.n_batch]) if s == 1)
    mask = mask.all(dims_to_contract, keepdims=True)
    fill_value = jnp.array(shape[props.n_batch:props.n_batch + props.n_sparse],
                           dtype=indices.dtype)
    f = lambda i, m: jnp.where(m[:, None], fill_value[None, :], i)  # noqa: E731
    indices = nfold_vmap(f, props.n_batch)(indices, mask)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=shape), nse=nse)


# ----------------------------------------------------------------------------------------
# reductions and elementwise products

def bcoo_reduce_sum(mat, *, axes):
    """Sum array element over given axes."""
    out_data, out_indices, out_shape = _bcoo_reduce_sum(mat.data, mat.indices,
                                                        spinfo=mat._info, axes=axes)
    return BCOO((out_data, out_indices), shape=out_shape)


def _bcoo_reduce_sum(data, indices, *, spinfo, axes):
    shape = tuple(spinfo.shape)
    if not all(0 <= a < len(shape) for a in axes):
        raise ValueError(f"bcoo_reduce_sum: axes {tuple(axes)} out of range for shape {shape}")
    n_batch, n_sparse, _, nse = _validate_bcoo(data, indices, shape)
    axes = sorted(set(axes))
    dense_axes = tuple(ax - n_sparse + 1 for ax in axes if ax >= n_batch + n_sparse)
    data = data.sum(dense_axes)
    if n_sparse:
        # zero-out data at padding (out-of-bound) indices.
        fill_value = jnp.expand_dims(
            jnp.array(shape[n_batch: n_batch + n_sparse], dtype=indices.dtype),
            range(indices.ndim - 1))
        mask = jnp.all(indices < fill_value, -1)
        if data.ndim > mask.ndim:
            mask = lax.expand_dims(mask, tuple(range(mask.ndim, data.ndim)))
        data = jnp.where(mask, data, 0)
    sparse_idx = [i for i in range(n_sparse) if i + n_batch not in axes]
    if not sparse_idx:
        indices = jnp.zeros(_tuple_replace(indices.shape, n_batch + 1, 0), indices.dtype)
    else:
        indices = indices[..., np.array(sparse_idx)]
    batch_axes = {ax for ax in axes if ax < n_batch}
    for ax in batch_axes:
        if data.shape[ax] == 1:
            if indices.shape[ax] == 1:
                data = data * shape[ax]
            else:
                data = lax.broadcast_in_dim(data, _tuple_replace(data.shape, ax, shape[ax]),
                                            tuple(range(data.ndim)))
        elif indices.shape[ax] == 1:
            data = data.sum(ax)
    new_batch_dims = tuple(sorted(set(range(n_batch)) - batch_axes))
    new_batch_shape = tuple(data.shape[i] for i in new_batch_dims)
    new_nse = nse * math.prod([data.shape[i] for i in batch_axes])
    data = lax.reshape(data, (*new_batch_shape, new_nse, *data.shape[n_batch + 1:]),
                       (*new_batch_dims, *sorted(batch_axes), *range(n_batch, data.ndim)))
    indices = lax.reshape(indices, (*new_batch_shape, new_nse, *indices.shape[n_batch + 1:]),
                          (*new_batch_dims, *sorted(batch_axes), *range(n_batch, indices.ndim)))
    out_shape = tuple(shape[i] for i in range(len(shape)) if i not in axes)
    return data, indices, out_shape


def bcoo_multiply_sparse(lhs, rhs):
    """An element-wise multiplication of two sparse arrays."""
    out_data, out_indices, out_shape = _bcoo_multiply_sparse(
        lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_spinfo=lhs._info,
        rhs_spinfo=rhs._info)
    return BCOO((out_data, out_indices), shape=out_shape)


def _bcoo_multiply_sparse(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_spinfo,
                          rhs_spinfo):
    lhs_shape, rhs_shape = tuple(lhs_spinfo.shape), tuple(rhs_spinfo.shape)
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs_shape}, {rhs_shape}")
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: arrays with differing numbers of "
                                  f"dense dimensions: {lhs}, {rhs}")
    n_batch = min(lhs.n_batch, rhs.n_batch)
    _mul = partial(_bcoo_multiply_sparse_unbatched, lhs_shape=lhs_shape[n_batch:],
                   rhs_shape=rhs_shape[n_batch:])
    data, indices = nfold_vmap(_mul, n_batch)(lhs_data, lhs_indices, rhs_data, rhs_indices)
    return data, indices, jnp.broadcast_shapes(lhs_shape, rhs_shape)


def _bcoo_multiply_sparse_unbatched(lhs_data, lhs_indices, rhs_data, rhs_indices, *,
                                    lhs_shape, rhs_shape):
    lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
    rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    if lhs.n_batch or rhs.n_batch:  # the batched side's batch dims become sparse ones
        from traxla.experimental.sparse.bcoo_shape import bcoo_update_layout
        if lhs.n_batch:
            lhs_data, lhs_indices = bcoo_update_layout(
                BCOO((lhs_data, lhs_indices), shape=lhs_shape), n_batch=0)._bufs
            lhs = _validate_bcoo(lhs_data, lhs_indices, lhs_shape)
        else:
            rhs_data, rhs_indices = bcoo_update_layout(
                BCOO((rhs_data, rhs_indices), shape=rhs_shape), n_batch=0)._bufs
            rhs = _validate_bcoo(rhs_data, rhs_indices, rhs_shape)
    dims = jnp.array([i for i, (s1, s2) in enumerate(zip(lhs_shape[:lhs.n_sparse],
                                                         rhs_shape[:rhs.n_sparse]))
                      if s1 != 1 and s2 != 1], dtype=int)
    nse = lhs.nse * rhs.nse
    mask = jnp.all(lhs_indices[:, None, dims] == rhs_indices[None, :, dims], -1)
    i_lhs, i_rhs = jnp.nonzero(mask, size=nse, fill_value=(lhs.nse, rhs.nse))
    data = (lhs_data.at[i_lhs].get(mode="fill", fill_value=0) *
            rhs_data.at[i_rhs].get(mode="fill", fill_value=0))
    indices = jnp.maximum(
        lhs_indices.at[i_lhs].get(mode="fill", fill_value=max(lhs_shape, default=0)),
        rhs_indices.at[i_rhs].get(mode="fill", fill_value=max(rhs_shape, default=0)))
    return data, indices


def bcoo_multiply_dense(sp_mat, v):
    """An element-wise multiplication between a sparse and a dense array."""
    return _bcoo_multiply_dense(sp_mat.data, sp_mat.indices, jnp.asarray(v),
                                spinfo=sp_mat._info)


def _bcoo_multiply_dense(data, indices, v, *, spinfo):
    shape = tuple(spinfo.shape)
    if v.ndim == 0:
        return lax.mul(data, v)
    if shape == v.shape:
        return lax.mul(data, _bcoo_extract(indices, v))
    if lax.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases "
            f"where the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={v.shape}")
    v = lax.expand_dims(v, range(len(shape) - v.ndim))
    props = _validate_bcoo(data, indices, shape)

    @partial(nfold_vmap, N=props.n_batch)
    def _mul(data, indices, v):
        ind = tuple(indices[:, i] for i in range(indices.shape[1]))
        ind = tuple(i if s != 1 else 0 for i, s in zip(ind, v.shape))
        return data * v[ind]
    return _mul(data, indices, v)


# ----------------------------------------------------------------------------------------
# the array class

@register_pytree_node_class
class BCOO(_BufferedSparse):
    """Experimental batched COO matrix: ``data`` of shape ``[*batch, nse, *dense]`` and
    ``indices`` of shape ``[*batch, nse, n_sparse]``; duplicate entries are summed."""
    _buffer_names = ("data", "indices")
    _index_tail = 2  # indices: [*batch, nse, n_sparse]

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self._set_buffers(args, tuple(shape), indices_sorted, unique_indices)
        _validate_bcoo(self.data, self.indices, self.shape)

    @property
    def n_sparse(self):
        return self.indices.shape[-1]

    # reshape, astype, sum and the operators are set by transform.py (through sparsify).
    def reshape(self, *args, **kwargs):
        raise NotImplementedError("BCOO.reshape")

    def astype(self, *args, **kwargs):
        raise NotImplementedError("BCOO.astype")

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """Create a BCOO array from a (dense) Array."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """Create a BCOO array from a scipy.sparse array."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        data = jnp.asarray(mat.data)
        indices = jnp.column_stack((mat.row, mat.col)).astype(index_dtype or jnp.int32)
        return cls((data, indices), shape=mat.shape, indices_sorted=False,
                   unique_indices=False)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0):
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: {shape=}, {n_dense=}, {n_batch=}, {nse=}")
        batch_shape, sparse_shape = shape[:n_batch], shape[n_batch:n_batch + n_sparse]
        dense_shape = shape[n_batch + n_sparse:]
        data = jnp.zeros((*batch_shape, nse, *dense_shape), dtype)
        indices = jnp.full((*batch_shape, nse, n_sparse), jnp.array(sparse_shape), index_dtype)
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(f"Invalid inputs: shape={(N, M)}, {n_dense=}, {n_batch=}")
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch,
                              n_dense=n_dense)
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(jnp.eye(N, M, k, dtype=dtype), n_batch=n_batch,
                                 n_dense=n_dense, index_dtype=index_dtype)
        if n_batch == 0:
            data = jnp.ones(diag_size, dtype=dtype)
            idx = jnp.arange(diag_size, dtype=index_dtype)
            indices = jnp.column_stack([idx - (k if k < 0 else 0), idx + (k if k > 0 else 0)])
        else:
            data = jnp.ones(N, dtype=dtype)
            indices = jnp.arange(N, dtype=index_dtype) + k
            if k < 0:
                data = data.at[:abs(k)].set(0)
                indices = indices.at[:abs(k)].set(M)
            elif k > 0:
                data = data.at[M - abs(k):].set(0)
                indices = indices.at[M - abs(k)].set(M)
            data = data[:, None]
            indices = indices[:, None, None]
        return cls((data, indices), shape=(N, M), indices_sorted=True, unique_indices=True)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error"):
        """Update the storage layout (i.e. n_batch & n_dense) of a BCOO matrix."""
        from traxla.experimental.sparse.bcoo_shape import bcoo_update_layout
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """A copy with duplicate indices summed, indices sorted (and explicit zeros removed
        when ``remove_zeros``)."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self):
        """Return a copy of the matrix with indices sorted."""
        return bcoo_sort_indices(self)

    def todense(self):
        """Create a dense version of the array."""
        return bcoo_todense(self)

    def transpose(self, axes=None):
        """Create a new array containing the transpose."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        mat_T = bcoo_transpose(self, permutation=perm)
        shape_T = tuple(self.shape[i] for i in perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch: self.n_batch + self.n_sparse]]
        is_sorted = self.indices_sorted if tuple(sparse_perm) == tuple(range(self.n_sparse)) \
            else False
        return BCOO((mat_T.data, mat_T.indices), shape=shape_T, indices_sorted=is_sorted,
                    unique_indices=self.unique_indices)


_register_vmappable(BCOO, "batch", keep_flags=True)


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Sequence
from traxla import Array
from traxla.base.sequences import safe_zip
from traxla.base.sequences import split_list
from traxla.base.sequences import unzip2
from traxla.batching.batch_trace import vmap
from traxla.experimental.sparse._base import JAXSparse
from traxla.experimental.sparse.bcoo_dot import bcoo_dot_general
from traxla.experimental.sparse.bcoo_dot import bcoo_dot_general_sampled
from traxla.experimental.sparse.bcoo_index import bcoo_dynamic_slice
from traxla.experimental.sparse.bcoo_index import bcoo_gather
from traxla.experimental.sparse.bcoo_index import bcoo_slice
from traxla.experimental.sparse.bcoo_shape import bcoo_broadcast_in_dim
from traxla.experimental.sparse.bcoo_shape import bcoo_concatenate
from traxla.experimental.sparse.bcoo_shape import bcoo_reshape
from traxla.experimental.sparse.bcoo_shape import bcoo_rev
from traxla.experimental.sparse.bcoo_shape import bcoo_squeeze
from traxla.experimental.sparse.bcoo_shape import bcoo_update_layout
from traxla.experimental.sparse.util import CuSparseEfficiencyWarning
from traxla.experimental.sparse.util import SparseEfficiencyError
from traxla.experimental.sparse.util import SparseEfficiencyWarning
from traxla.ir.rules.indexing import GatherDimensionNumbers
from traxla.ir.rules.indexing import GatherScatterMode
from traxla.lax import DotDimensionNumbers
from traxla.numpy._shape import canonicalize_axis
from traxla.typing import ArrayLike
from traxla.typing import DTypeLike
from typing import Any
from typing import Protocol
import functools
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.config as config
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad
import traxla.interpreters.batching as batching
import traxla.interpreters.mlir as mlir
import traxla.interpreters.partial_eval as pe
import traxla.tree_util as tree_util
import warnings
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      functions='Shape bcoo_conv_general_dilated ranges_like remaining',
      classes='Buffer SparseInfo',
      constants=('CUSPARSE_DATA_DTYPES CUSPARSE_INDEX_DTYPES bcoo_dot_general_p '
      'bcoo_dot_general_sampled_p bcoo_extract_p bcoo_fromdense_p bcoo_sort_indices_p '
      'bcoo_spdot_general_p bcoo_sum_duplicates_p bcoo_todense_p bcoo_transpose_p '
      'coo_spmm_p coo_spmv_p'))
