"""BCOO layout and shape operations, as JAX's: ``bcoo_update_layout`` (moving dimensions
between batch, sparse and dense storage), ``bcoo_broadcast_in_dim``, ``bcoo_concatenate``,
``bcoo_reshape``, ``bcoo_rev`` and ``bcoo_squeeze``."""
from __future__ import annotations

import math
import operator
import warnings
from functools import partial

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape
from traxla.experimental.sparse.bcoo import BCOO, _validate_bcoo, _validate_permutation
from traxla.experimental.sparse.util import (SparseEfficiencyError, SparseEfficiencyWarning,
                                             nfold_vmap)


def _split(seq, sizes):
    seq, out, start = list(seq), [], 0
    for n in sizes:
        out.append(seq[start:start + n])
        start += n
    return (*out, seq[start:])


def _bcoo_set_nse(mat, nse):
    """A copy of ``mat`` with ``nse`` stored elements (padding or dropping)."""
    nse = operator.index(nse)
    if mat.nse == nse:
        return mat
    if nse <= mat.nse:
        data = mat.data[(*(slice(None) for _ in range(mat.n_batch)), slice(nse))]
        indices = mat.indices[..., :nse, :]
    else:
        data = jnp.zeros_like(mat.data, shape=(*mat.data.shape[:mat.n_batch], nse,
                                               *mat.data.shape[mat.n_batch + 1:]))
        data = data.at[(*(slice(None) for _ in range(mat.n_batch)), slice(mat.nse))].set(mat.data)
        indices = jnp.zeros_like(mat.indices, shape=(*mat.indices.shape[:-2], nse,
                                                     mat.indices.shape[-1]))
        indices = indices.at[..., :mat.nse, :].set(mat.indices)
        indices = indices.at[..., mat.nse:, :].set(jnp.array(
            mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse], dtype=indices.dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


def bcoo_update_layout(mat, *, n_batch=None, n_dense=None, on_inefficient="error"):
    """Update the storage layout (n_batch and n_dense) of a BCOO matrix."""
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    n_sparse = mat.ndim - n_batch - n_dense
    if on_inefficient not in ["error", "warn", None]:
        raise ValueError("on_inefficent={on_inefficient!r}; expected one of "
                         "['error', 'warn', None].")
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if n_sparse < 0:
        raise ValueError(f"sum of {n_batch=} and {n_dense=} "
                         f"cannot be larger than mat.ndim={mat.ndim}.")

    def _maybe_err_or_warn(msg):
        if on_inefficient == "error":
            raise SparseEfficiencyError(msg + " To disable this error, set the on_inefficient "
                                        "argument of bcoo_update_layout to 'warn' or None.")
        if on_inefficient == "warn":
            warnings.warn(msg + " To disable this warning, set the on_inefficient argument "
                          "of bcoo_update_layout to None.", category=SparseEfficiencyWarning)

    if n_dense > mat.n_dense and any(d > 1 for d in mat.shape[-n_dense:mat.ndim - mat.n_dense]):
        _maybe_err_or_warn(f"For matrix of shape {mat.shape}, increasing n_dense from "
                           f"{mat.n_dense} to {n_dense} results in inefficient storage.")
    if n_batch > mat.n_batch and any(d > 1 for d in mat.shape[mat.n_batch:n_batch]):
        _maybe_err_or_warn(f"For matrix of shape {mat.shape}, increasing n_batch from "
                           f"{mat.n_batch} to {n_batch} results in inefficient storage.")
    return _bcoo_update_layout(mat, n_batch=n_batch, n_dense=n_dense)


@partial(jit, static_argnames=("n_batch", "n_dense"))
def _bcoo_update_layout(mat, *, n_batch, n_dense):
    data, indices, shape = mat.data, mat.indices, mat.shape
    cur_batch, cur_dense = mat.n_batch, mat.n_dense

    if n_dense < cur_dense:  # dense dimensions become sparse ones
        n = cur_dense - n_dense

        @partial(nfold_vmap, N=cur_batch + 1)
        def _update(d, i):
            new_d = d.reshape(math.prod(d.shape[:n]), *d.shape[n:])
            meshes = jnp.meshgrid(*(jnp.arange(s, dtype=i.dtype) for s in d.shape[:n]),
                                  indexing="ij")
            new_i = jnp.column_stack([jnp.broadcast_to(i, (new_d.shape[0], i.size)),
                                      *map(jnp.ravel, meshes)])
            return new_d, new_i
        data, indices = _update(data, indices)
        data = data.reshape(*data.shape[:cur_batch],
                            math.prod(data.shape[cur_batch:cur_batch + 2]),
                            *data.shape[cur_batch + 2:])
        indices = indices.reshape(*indices.shape[:cur_batch],
                                  math.prod(indices.shape[cur_batch:cur_batch + 2]),
                                  *indices.shape[cur_batch + 2:])
        cur_dense = n_dense

    if n_batch < cur_batch:  # batch dimensions become sparse ones
        n = cur_batch - n_batch

        @partial(nfold_vmap, N=n_batch)
        def _update(d, i):
            nse = i.shape[-2]
            new_d = d.reshape(math.prod(d.shape[:n + 1]), *d.shape[n + 1:])
            meshes = jnp.meshgrid(*(jnp.arange(s, dtype=i.dtype) for s in (*i.shape[:n], nse)),
                                  indexing="ij")
            new_i = i.reshape(math.prod(i.shape[:n + 1]), *i.shape[n + 1:])
            return new_d, jnp.column_stack((*(m.ravel() for m in meshes[:-1]), new_i))
        data, indices = _update(data, indices)
        cur_batch = n_batch

    if n_dense > cur_dense:  # sparse dimensions become dense ones
        n = n_dense - cur_dense

        @partial(nfold_vmap, N=cur_batch + 1)
        def _update(d, i):
            new_d = jnp.zeros_like(d, shape=shape[-n_dense:]).at[tuple(i[-n:])].set(d)
            return new_d, i[:-n]
        data, indices = _update(data, indices)
        cur_dense = n_dense

    if n_batch > cur_batch:  # sparse dimensions become batch ones
        n = n_batch - cur_batch

        @partial(nfold_vmap, N=cur_batch)
        def _update(d, i):
            nse = i.shape[-2]
            idx = tuple(i[:, j] for j in range(n)) + (jnp.arange(nse),)
            new_i = jnp.broadcast_to(i[:, n:], (*shape[cur_batch:n_batch], nse, i.shape[-1] - n))
            new_d_shape = (*shape[cur_batch:n_batch], nse, *d.shape[d.ndim - n_dense:])
            return jnp.zeros_like(d, shape=new_d_shape).at[idx].set(d), new_i
        data, indices = _update(data, indices)
    return BCOO((data, indices), shape=shape)


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """Expand the size and rank of a BCOO array (``lax.broadcast_in_dim``)."""
    return BCOO(_bcoo_broadcast_in_dim(mat.data, mat.indices, spinfo=mat._info,
                                       shape=tuple(shape),
                                       broadcast_dimensions=tuple(broadcast_dimensions)),
                shape=shape)


def _bcoo_broadcast_in_dim(data, indices, *, spinfo, shape, broadcast_dimensions):
    if len(spinfo.shape) != len(broadcast_dimensions):
        raise ValueError(f"spinfo.shape={spinfo.shape} and broadcast_dimensions="
                         f"{broadcast_dimensions} must have the same length")
    props = _validate_bcoo(data, indices, spinfo.shape)
    batch_dims, sparse_dims, dense_dims = _split(broadcast_dimensions,
                                                 [props.n_batch, props.n_sparse])
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_n_batch = min(broadcast_dimensions[props.n_batch:], default=len(shape))
    new_n_dense = props.n_dense and len(shape) - min(broadcast_dimensions[-props.n_dense:])
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if (math.prod(spinfo.shape[props.n_batch:props.n_batch + props.n_sparse])
            != math.prod(shape[new_n_batch:new_n_batch + new_n_sparse])):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    if (new_n_batch, new_n_dense) != (props.n_batch, props.n_dense):
        data = lax.broadcast_in_dim(
            data, (*shape[:new_n_batch], props.nse, *shape[new_n_batch + new_n_sparse:]),
            (*batch_dims, new_n_batch, *(b + 1 - new_n_sparse for b in dense_dims)))
        indices = lax.broadcast_in_dim(indices, (*shape[:new_n_batch], props.nse, props.n_sparse),
                                       (*batch_dims, new_n_batch, new_n_batch + 1))
    if new_n_sparse != props.n_sparse:
        ind = jnp.array(sparse_dims, int) - new_n_batch
        indices = jnp.zeros_like(indices, shape=(*shape[:new_n_batch], props.nse, new_n_sparse)
                                 ).at[..., ind].set(indices)
    return data, indices


def bcoo_concatenate(operands, *, dimension):
    """Sparse implementation of ``lax.concatenate``."""
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO arrays. "
                         f"Got {operands}")
    out = eval_shape(lambda *ops: lax.concatenate(ops, dimension),
                     *(ShapeDtypeStruct(op.shape, op.dtype) for op in operands))
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1 and max(n_batches) == 1:  # op[None, :] next to a batched array
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [bcoo_update_layout(op, n_batch=1) if op.n_batch == 0 else op
                        for op in operands]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [bcoo_update_layout(op, n_batch=0) if op.n_batch == 1 else op
                        for op in operands]
        n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    n_batch, n_sparse = operands[0].n_batch, operands[0].n_sparse
    index_batches = [op.indices.shape[:n_batch] for op in operands]
    data_batches = [op.data.shape[:n_batch] for op in operands]
    if dimension < n_batch:
        index_batches = [s[:dimension] + s[dimension + 1:] for s in index_batches]
        data_batches = [s[:dimension] + s[dimension + 1:] for s in data_batches]
    if not len(set(index_batches)) == len(set(data_batches)) == 1:
        raise NotImplementedError("concatenation of arrays with broadcasted batch indices")
    if dimension < n_batch:
        nses = {op.nse for op in operands}
        if len(nses) != 1:
            operands = [_bcoo_set_nse(op, max(nses)) for op in operands]
        new_indices = lax.concatenate([op.indices for op in operands], dimension=dimension)
        new_data = lax.concatenate([op.data for op in operands], dimension=dimension)
    elif dimension < n_batch + n_sparse:
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]],
                            dtype=operands[0].indices.dtype)
        new_data = lax.concatenate([op.data for op in operands], dimension=n_batch)
        new_indices = lax.concatenate([op.indices.at[..., dimension - n_batch].add(offset)
                                       for op, offset in zip(operands, offsets)],
                                      dimension=n_batch)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((new_data, new_indices), shape=tuple(out.shape))


def bcoo_reshape(mat, *, new_sizes, dimensions=None, sharding=None):
    """Sparse implementation of ``lax.reshape`` (batch, sparse and dense dimensions may
    not mix)."""
    return _bcoo_reshape(mat, new_sizes=tuple(int(d) for d in new_sizes),
                         dimensions=None if dimensions is None else tuple(dimensions))


@partial(jit, static_argnames=("new_sizes", "dimensions"))
def _bcoo_reshape(mat, *, new_sizes, dimensions):
    if (tuple(mat.indices.shape[:mat.n_batch]) != tuple(mat.data.shape[:mat.n_batch])
            != tuple(mat.shape[:mat.n_batch])):
        raise NotImplementedError("reshape of arrays with broadcasted batch dimensions.")
    batch_shape, sparse_shape, _ = _split(mat.shape, [mat.n_batch, mat.n_sparse])
    batch_perm, sparse_perm, dense_perm = _validate_permutation(
        mat.data, mat.indices, dimensions or tuple(range(mat.ndim)), mat.shape)
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    cuml_shape = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cuml_shape:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_batch={mat.n_batch}")
    if sparse_size != 1 and batch_size * sparse_size not in cuml_shape:
        raise ValueError("bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_dense={mat.n_dense}")
    i1 = int(cuml_shape.searchsorted(batch_size, side="right"))
    i2 = int(cuml_shape.searchsorted(batch_size * sparse_size, side="right"))
    new_batch_shape, new_sparse_shape, new_dense_shape = _split(new_sizes, [i1, i2 - i1])
    data = lax.reshape(mat.data, (*new_batch_shape, mat.nse, *new_dense_shape),
                       (*batch_perm, mat.n_batch, *(p + mat.n_batch + 1 for p in dense_perm)))
    indices = lax.reshape(mat.indices, (*new_batch_shape, mat.nse, mat.n_sparse),
                          (*batch_perm, mat.n_batch, mat.n_batch + 1))
    if not new_sparse_shape:
        indices = jnp.zeros_like(indices, shape=(*new_batch_shape, mat.nse, 0))
    elif sparse_shape:
        cols = tuple(indices[..., i] for i in sparse_perm)
        dims = tuple(int(mat.shape[mat.n_batch + i]) for i in sparse_perm)
        flat = jnp.ravel_multi_index(cols, dims=dims, mode="clip")
        bounds = jnp.array(mat.shape[mat.n_batch:mat.n_batch + mat.n_sparse], dtype=indices.dtype)
        oob = (indices >= bounds).any(-1, keepdims=True)
        new_cols = jnp.unravel_index(flat, tuple(new_sparse_shape))
        indices = jnp.concatenate([c[..., None] for c in new_cols], axis=-1)
        indices = jnp.where(oob, jnp.array(new_sparse_shape, dtype=indices.dtype), indices)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_rev(operand, dimensions):
    """Sparse implementation of ``lax.rev``."""
    eval_shape(partial(lax.rev, dimensions=tuple(dimensions)),
               ShapeDtypeStruct(operand.shape, operand.dtype))
    nb, ns = operand.n_batch, operand.n_sparse
    batch_dims = [d for d in dimensions if d < nb]
    sparse_dims = [d for d in dimensions if nb <= d < nb + ns]
    dense_dims = [d for d in dimensions if d >= nb + ns]
    data, indices = operand.data, operand.indices
    if batch_dims:
        indices = lax.rev(indices, dimensions=batch_dims)
    if batch_dims or dense_dims:
        data = lax.rev(data, dimensions=batch_dims + [d + 1 - ns for d in dense_dims])
    if sparse_dims:
        sparse_shape = jnp.array(operand.shape[nb:nb + ns], dtype=indices.dtype)
        spdims = jnp.array([d - nb for d in sparse_dims])
        indices = indices.at[..., spdims].mul(-1)
        indices = indices.at[..., spdims].add(sparse_shape[spdims] - 1)
        indices = jnp.where(indices < 0, sparse_shape, indices)
    return BCOO((data, indices), shape=operand.shape)


def bcoo_squeeze(arr, *, dimensions):
    """Sparse implementation of ``lax.squeeze``."""
    dimensions = tuple(d + arr.ndim if -arr.ndim <= d < 0 else d for d in dimensions)
    if any(not 0 <= d < arr.ndim for d in dimensions):
        raise ValueError(f"axis {dimensions} is out of bounds for array of dimension {arr.ndim}")
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={arr.shape} and dimensions={dimensions}")
    batch_dims = tuple(d for d in dimensions if d < arr.n_batch)
    sparse_dims = np.array([i for i in range(arr.n_sparse) if i + arr.n_batch not in dimensions],
                           dtype=int)
    dense_dims = tuple(d - arr.n_sparse + 1 for d in dimensions
                       if d >= arr.n_batch + arr.n_sparse)
    data_out = lax.squeeze(arr.data, batch_dims + dense_dims)
    indices_out = lax.squeeze(arr.indices[..., sparse_dims], batch_dims)
    out_shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO((data_out, indices_out), shape=out_shape, indices_sorted=arr.indices_sorted,
                unique_indices=arr.unique_indices)
