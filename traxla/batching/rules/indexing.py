"""Batching rules for gather, the scatter family, sort and the cumulative
reductions, plus dynamic_slice / dynamic_update_slice, which (as in JAX) batch
into a gather / scatter whose dimension numbers carry the mapped axis."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules import shape as S
from traxla.ir.rules.indexing import (CUMULATIVE, SCATTERS, GatherDimensionNumbers, GatherScatterMode,
                                 P as I, ScatterDimensionNumbers, sort_p)
from traxla.batching.batch_trace import bdim_at_front, moveaxis, register_batching

gather_p = I["gather"]


def _add1(dims):
    return tuple(np.add(1, dims))


def _with_batch_dim(dn, indices_batched):
    """Gather or scatter dimension numbers (the same five fields, in the same order: window
    dims, collapsed/inserted dims, index map, operand and indices batching dims) for an
    operand whose batch dim is now at the front: a new leading window dim when the indices
    are unbatched; else a batching dim, paired with the indices' (at their front too)."""
    window, inserted, index_map, operand_batching, indices_batching = dn
    if not indices_batched:
        return type(dn)((0,) + _add1(window), _add1(inserted), _add1(index_map),
                        _add1(operand_batching), indices_batching)
    return type(dn)(_add1(window), _add1(inserted), _add1(index_map),
                    (0,) + _add1(operand_batching), (0,) + _add1(indices_batching))


# -- gather ----------------------------------------------------------------------------------

def _gather(size, vals, dims, *, dimension_numbers, slice_sizes, unique_indices,
            indices_are_sorted, mode, fill_value):
    operand, indices = vals
    operand_bdim, indices_bdim = dims
    dn = dimension_numbers
    if operand_bdim is not None and indices_bdim is None:
        operand = moveaxis(operand, operand_bdim, 0)
        new = _with_batch_dim(dn, indices_batched=False)
        out = gather_p.bind(operand, indices, dimension_numbers=new,
                            slice_sizes=(lax.shape_of(operand)[0],) + tuple(slice_sizes),
                            unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                            mode=mode, fill_value=fill_value)
        return out, 0
    if operand_bdim is None:
        indices = moveaxis(indices, indices_bdim, 0)
        new = GatherDimensionNumbers(
            offset_dims=tuple(1 + d for d in dn.offset_dims),
            collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_add1(dn.start_indices_batching_dims))
        # batched lookups into one array need not stay sorted or unique
        out = gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes,
                            unique_indices=False, indices_are_sorted=False, mode=mode,
                            fill_value=fill_value)
        return out, 0
    operand = moveaxis(operand, operand_bdim, 0)
    indices = moveaxis(indices, indices_bdim, 0)
    lead = 0 if lax.shape_of(operand)[0] == 0 else 1
    new = _with_batch_dim(dn, indices_batched=True)
    out = gather_p.bind(operand, indices, dimension_numbers=new,
                        slice_sizes=(lead,) + tuple(slice_sizes), unique_indices=unique_indices,
                        indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)
    return out, 0


register_batching(gather_p, _gather)


# -- scatter ---------------------------------------------------------------------------------

def _scatter(prim):
    def rule(size, vals, dims, *, update_jaxpr, update_consts, dimension_numbers,
             indices_are_sorted, unique_indices, mode):
        operand, indices, updates = vals
        operand_bdim, indices_bdim, updates_bdim = dims
        dn = dimension_numbers
        # the operand's batch dim goes (or is created) at the front, to scatter into it
        operand = bdim_at_front(operand, operand_bdim, size)
        updates = bdim_at_front(updates, updates_bdim, size)
        if indices_bdim is not None:
            indices = bdim_at_front(indices, indices_bdim, size)
        new = _with_batch_dim(dn, indices_batched=indices_bdim is not None)
        out = prim.bind(operand, indices, updates, dimension_numbers=new,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts)
        return out, 0
    return rule


for _name in SCATTERS:
    register_batching(I[_name], _scatter(I[_name]))


# -- dynamic_slice / dynamic_update_slice: a gather / scatter, as in JAX ---------------------

def _batch_indices(indices, dims):
    """The start indices as one index vector (batched: ``[n, k]`` at 0)."""
    if not indices:
        return np.array([], "int32"), None
    size = next((lax.shape_of(x)[d] for x, d in zip(indices, dims) if d is not None), None)
    if size is None:
        return lax.concatenate([lax.broadcast(i, (1,)) for i in indices], 0), None
    return lax.concatenate(
        [lax.broadcast_in_dim(x, (size, 1), (0,) if d is not None else ())
         for x, d in zip(indices, dims)], 1), 0


def _dynamic_slice(size, vals, dims, *, slice_sizes):
    operand, *idx = vals
    operand_bdim, *idx_dims = dims
    ndims = len(lax.shape_of(operand)) - (0 if operand_bdim is None else 1)
    axes = tuple(range(ndims))
    dn = GatherDimensionNumbers(offset_dims=axes, collapsed_slice_dims=(), start_index_map=axes)
    index, index_bdim = _batch_indices(idx, idx_dims)
    return _gather(size, [operand, index], [operand_bdim, index_bdim], dimension_numbers=dn,
                   slice_sizes=tuple(slice_sizes), unique_indices=True, indices_are_sorted=True,
                   mode=GatherScatterMode.CLIP, fill_value=None)


_scatter_p = I["scatter"]


def _dynamic_update_slice(size, vals, dims):
    operand, update, *idx = vals
    operand_bdim, update_bdim, *idx_dims = dims
    update_shape = lax.shape_of(update)
    if update_bdim is not None:
        update_shape = tuple(np.delete(update_shape, update_bdim))
    axes = tuple(range(len(update_shape)))
    dn = ScatterDimensionNumbers(update_window_dims=axes, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=axes)
    index, index_bdim = _batch_indices(idx, idx_dims)
    return _scatter(_scatter_p)(size, [operand, index, update], [operand_bdim, index_bdim, update_bdim],
                                update_jaxpr=None, update_consts=(), dimension_numbers=dn,
                                indices_are_sorted=True, unique_indices=True,
                                mode=GatherScatterMode.CLIP)


register_batching(S.dynamic_slice_p, _dynamic_slice)
register_batching(S.dynamic_update_slice_p, _dynamic_update_slice)


# -- sort and cumulative reductions ------------------------------------------------------------

def _sort(size, vals, dims, *, dimension, is_stable, num_keys):
    proto, new_bdim = next((x, d) for x, d in zip(vals, dims) if d is not None)
    shape = lax.shape_of(proto)
    args = []
    for x, d in zip(vals, dims):
        if d is None:
            keep = [int(k) for k in np.delete(np.arange(len(shape)), new_bdim)]
            args.append(lax.broadcast_in_dim(x, shape, keep))
        else:
            args.append(moveaxis(x, d, new_bdim))
    new_dimension = dimension + (new_bdim <= dimension)
    outs = sort_p.bind(*args, dimension=new_dimension, is_stable=is_stable, num_keys=num_keys)
    return outs, [new_bdim] * len(outs)


register_batching(sort_p, _sort)


def _cumulative(prim):
    def rule(size, vals, dims, *, axis, reverse):
        d = dims[0]
        return prim.bind(vals[0], axis=axis if axis < d else axis + 1, reverse=reverse), d
    return rule


for _name in CUMULATIVE:
    register_batching(I[_name], _cumulative(I[_name]))

del dtypes
