"""BCOO slicing and indexing, as JAX's: ``bcoo_slice``, ``bcoo_dynamic_slice`` and
``bcoo_gather`` (and through them, ``BCOO.__getitem__``)."""
from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from traxla import dtypes, lax, numpy as jnp
from traxla.api import jit
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape
from traxla.batching import vmap
from traxla.experimental.sparse.bcoo import (BCOO, _bcoo_sum_duplicates, _validate_bcoo,
                                             bcoo_transpose)
from traxla.experimental.sparse.bcoo_shape import (_split, bcoo_reshape, bcoo_squeeze,
                                                   bcoo_update_layout)
from traxla.experimental.sparse.util import SparseInfo
from traxla.ir.rules.indexing import GatherScatterMode


def _drop_out_of_slice(mat, new_data, new_indices, keep, new_shape, new_nse):
    """Zero the data of elements outside the slice and, when more elements are stored
    than the slice holds, sum duplicates down to ``new_nse`` (JAX's step)."""
    keep_data = lax.expand_dims(keep[..., 0], range(mat.n_batch + 1,
                                                    mat.n_batch + 1 + mat.n_dense))
    new_data = jnp.where(keep_data, new_data, 0)
    if mat.nse > new_nse:
        new_data, new_indices = _bcoo_sum_duplicates(
            new_data, new_indices, spinfo=SparseInfo(shape=tuple(new_shape)), nse=new_nse)
    return new_data, new_indices


def bcoo_slice(mat, *, start_indices, limit_indices, strides=None):
    """Sparse implementation of ``lax.slice``."""
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = [operator.index(i) for i in start_indices]
    limit_indices = [operator.index(i) for i in limit_indices]
    strides = [1] * mat.ndim if strides is None else [operator.index(i) for i in strides]
    if len(start_indices) != len(limit_indices) != len(strides) != mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}")
    if len(start_indices) != mat.ndim or len(limit_indices) != mat.ndim or not all(
            0 <= start <= end <= size
            for start, end, size in zip(start_indices, limit_indices, mat.shape)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={start_indices}, "
                         f"limit_indices={limit_indices} and shape={mat.shape}")
    return _bcoo_slice(mat, start_indices=tuple(start_indices),
                       limit_indices=tuple(limit_indices), strides=tuple(strides))


@partial(jit, static_argnames=("start_indices", "limit_indices", "strides"))
def _bcoo_slice(mat, *, start_indices, limit_indices, strides):
    nb, ns = mat.n_batch, mat.n_sparse
    start_b, start_s, start_d = _split(start_indices, [nb, ns])
    end_b, end_s, end_d = _split(limit_indices, [nb, ns])
    stride_b, stride_s, stride_d = _split(strides, [nb, ns])
    data_slices, index_slices = [], []
    for i, (start, end, stride) in enumerate(zip(start_b, end_b, stride_b)):
        data_slices.append(slice(None) if mat.data.shape[i] != mat.shape[i]
                           else slice(start, end, stride))
        index_slices.append(slice(None) if mat.indices.shape[i] != mat.shape[i]
                            else slice(start, end, stride))
    data_slices.append(slice(None))
    index_slices.extend([slice(None), slice(None)])
    data_slices.extend(slice(s, e, st) for s, e, st in zip(start_d, end_d, stride_d))
    new_data = mat.data[tuple(data_slices)]
    new_indices = mat.indices[tuple(index_slices)]
    new_shape = tuple((end - start + stride - 1) // stride
                      for start, end, stride in zip(start_indices, limit_indices, strides))
    _, new_shape_sparse, _ = _split(new_shape, [nb, ns])
    if ns:
        starts = jnp.expand_dims(jnp.array(start_s, dtype=new_indices.dtype), range(nb + 1))
        ends = jnp.expand_dims(jnp.array(end_s, dtype=new_indices.dtype), range(nb + 1))
        strides_ = jnp.expand_dims(jnp.array(stride_s, dtype=new_indices.dtype), range(nb + 1))
        keep = jnp.all((new_indices >= starts) & (new_indices < ends)
                       & ((new_indices - starts) % strides_ == 0), axis=-1, keepdims=True)
        new_indices = jnp.where(keep, (new_indices - starts + strides_ - 1) // strides_,
                                (ends - starts + strides_ - 1) // strides_)
        new_data, new_indices = _drop_out_of_slice(mat, new_data, new_indices, keep, new_shape,
                                                   math.prod(new_shape_sparse))
    return BCOO((new_data, new_indices), shape=new_shape)


def bcoo_dynamic_slice(mat, start_indices, slice_sizes):
    """Sparse implementation of ``lax.dynamic_slice``."""
    slice_sizes = tuple(operator.index(i) for i in slice_sizes)
    eval_shape(lambda x, *idx: lax.dynamic_slice(x, idx, slice_sizes),
               ShapeDtypeStruct(mat.shape, mat.dtype), *start_indices)
    if not isinstance(mat, BCOO):
        raise TypeError(f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}")
    start_indices = tuple(jnp.asarray(i) for i in start_indices)
    if not all(dtypes.issubdtype(i.dtype, np.integer) and i.shape == () for i in start_indices):
        raise TypeError("bcoo_dynamic_slice: start_indices must be integer scalars")
    if len(start_indices) != len(slice_sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}")
    if not all(0 <= size <= axis for size, axis in zip(slice_sizes, mat.shape)):
        raise TypeError("slice_sizes must be less than or equal to operand shape, "
                        f"got slice_sizes {slice_sizes} for operand shape {mat.shape}")
    return _bcoo_dynamic_slice(mat, start_indices, slice_sizes=slice_sizes)


@partial(jit, static_argnames=("slice_sizes",))
def _bcoo_dynamic_slice(mat, start_indices, *, slice_sizes):
    nb, ns = mat.n_batch, mat.n_sparse
    start_b, start_s, start_d = _split(start_indices, [nb, ns])
    size_b, size_s, size_d = _split(slice_sizes, [nb, ns])
    zero = jnp.zeros((), start_indices[0].dtype if start_indices else np.int32)
    data_start, data_sizes, indices_start, indices_sizes = [], [], [], []
    for i, (start, size) in enumerate(zip(start_b, size_b)):
        data_bc, indices_bc = mat.data.shape[i] != mat.shape[i], mat.indices.shape[i] != mat.shape[i]
        data_start.append(zero if data_bc else start)
        data_sizes.append(1 if data_bc else size)
        indices_start.append(zero if indices_bc else start)
        indices_sizes.append(1 if indices_bc else size)
    data_start.append(zero)
    data_sizes.append(mat.nse)
    indices_start.extend([zero, zero])
    indices_sizes.extend([mat.nse, ns])
    data_start.extend(start_d)
    data_sizes.extend(size_d)
    new_data = lax.dynamic_slice(mat.data, data_start, data_sizes)
    new_indices = lax.dynamic_slice(mat.indices, indices_start, indices_sizes)
    new_shape = slice_sizes
    if ns:
        starts = jnp.array(start_s, dtype=new_indices.dtype)
        sizes = jnp.array(size_s, dtype=new_indices.dtype)
        sparse_shape = jnp.array(mat.shape[nb:nb + ns], dtype=new_indices.dtype)
        starts = jnp.where(starts < 0, starts + sparse_shape, starts)
        starts = jnp.clip(starts, 0, sparse_shape - sizes)
        starts = jnp.expand_dims(starts, range(nb + 1))
        sizes = jnp.expand_dims(sizes, range(nb + 1))
        keep = jnp.all((new_indices >= starts) & (new_indices < starts + sizes), -1,
                       keepdims=True)
        new_indices = jnp.where(keep, new_indices - starts, sizes)
        new_data, new_indices = _drop_out_of_slice(mat, new_data, new_indices, keep, new_shape,
                                                   math.prod(size_s))
    return BCOO((new_data, new_indices), shape=new_shape)


def bcoo_gather(operand, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """BCOO version of ``lax.gather`` (mode ``promise_in_bounds`` only, as JAX's)."""
    _validate_bcoo(operand.data, operand.indices, operand.shape)
    if mode is None:
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    if GatherScatterMode.from_any(mode) != GatherScatterMode.PROMISE_IN_BOUNDS:
        raise NotImplementedError(f"bcoo_gather: mode={mode} not yet supported.")
    start_indices = jnp.asarray(start_indices)
    out = eval_shape(partial(lax.gather, dimension_numbers=dimension_numbers,
                             slice_sizes=tuple(slice_sizes), unique_indices=unique_indices,
                             indices_are_sorted=indices_are_sorted, mode=mode,
                             fill_value=fill_value),
                     ShapeDtypeStruct(operand.shape, operand.dtype),
                     ShapeDtypeStruct(start_indices.shape, start_indices.dtype))
    return _bcoo_gather(operand, start_indices, dimension_numbers=dimension_numbers,
                        slice_sizes=tuple(slice_sizes), out_shape=tuple(out.shape),
                        out_dtype=out.dtype)


@partial(jit, static_argnames=("dimension_numbers", "slice_sizes", "out_shape", "out_dtype"))
def _bcoo_gather(operand, start_indices, *, dimension_numbers, slice_sizes, out_shape,
                 out_dtype):
    offset_dims = tuple(dimension_numbers.offset_dims)
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    full_start = [jnp.zeros((), start_indices.dtype)] * operand.ndim
    in_axes = [None] * operand.ndim
    full_sizes = list(operand.shape)
    for i, j in enumerate(dimension_numbers.start_index_map):
        full_start[j] = start_indices[..., i].ravel()
        full_sizes[j] = slice_sizes[j]
        in_axes[j] = 0

    def slice_func(indices):
        slc = bcoo_dynamic_slice(operand, indices, slice_sizes=full_sizes)
        return bcoo_squeeze(slc, dimensions=collapsed)
    result = vmap(slice_func, in_axes=(in_axes,))(full_start)
    result = bcoo_reshape(result, new_sizes=(*start_indices.shape[:-1], *result.shape[1:]),
                          dimensions=tuple(range(result.ndim)))
    if result.shape:
        batch_dims = tuple(d for d in range(len(out_shape)) if d not in offset_dims)
        permutation = np.zeros(result.ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims, dtype=int)] = np.arange(result.ndim)
        if set(permutation[:len(batch_dims)]) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    return result.reshape(out_shape).astype(out_dtype)
