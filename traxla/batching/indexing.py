"""Batching rules for gather, scatters, sort and cumulative reductions. The batch
dimension rides in StableHLO's operand/indices batching dims when both sides are
batched, as an extra window dimension when only the operand is."""
from __future__ import annotations

from ..ir.rules.indexing import CUMULATIVE, P, SCATTERS, sort_p
from .core import bdim_at_front, moveaxis, register_batching


def _shift(dims, by=1):
    return tuple(int(d) + by for d in dims)


def _gather(size, vals, dims, *, dimension_numbers, slice_sizes, **params):
    operand, indices = vals
    od, idd = dims
    dn = dimension_numbers
    if idd is None:
        operand = moveaxis(operand, od, 0)
        new = dn._replace(offset_dims=(0,) + _shift(dn.offset_dims),
                          collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
                          start_index_map=_shift(dn.start_index_map),
                          operand_batching_dims=_shift(dn.operand_batching_dims))
        return P["gather"].bind(operand, indices, dimension_numbers=new,
                                slice_sizes=(size,) + tuple(slice_sizes), **params), 0
    indices = moveaxis(indices, idd, 0)
    if od is None:
        new = dn._replace(offset_dims=_shift(dn.offset_dims))
        return P["gather"].bind(operand, indices, dimension_numbers=new,
                                slice_sizes=tuple(slice_sizes), **params), 0
    operand = moveaxis(operand, od, 0)
    new = dn._replace(offset_dims=_shift(dn.offset_dims),
                      collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
                      start_index_map=_shift(dn.start_index_map),
                      operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
                      start_indices_batching_dims=(0,) + _shift(dn.start_indices_batching_dims))
    return P["gather"].bind(operand, indices, dimension_numbers=new,
                            slice_sizes=(1,) + tuple(slice_sizes), **params), 0


def _scatter(prim):
    def rule(size, vals, dims, *, dimension_numbers, **params):
        operand, indices, updates = vals
        od, idd, ud = dims
        dn = dimension_numbers
        operand = bdim_at_front(operand, od, size)
        if idd is None:
            updates = bdim_at_front(updates, ud, size)
            new = dn._replace(update_window_dims=(0,) + _shift(dn.update_window_dims),
                              inserted_window_dims=_shift(dn.inserted_window_dims),
                              scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                              operand_batching_dims=_shift(dn.operand_batching_dims))
            return prim.bind(operand, indices, updates, dimension_numbers=new, **params), 0
        indices = moveaxis(indices, idd, 0)
        updates = bdim_at_front(updates, ud, size)
        new = dn._replace(update_window_dims=_shift(dn.update_window_dims),
                          inserted_window_dims=_shift(dn.inserted_window_dims),
                          scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
                          operand_batching_dims=(0,) + _shift(dn.operand_batching_dims),
                          scatter_indices_batching_dims=(0,) + _shift(dn.scatter_indices_batching_dims))
        return prim.bind(operand, indices, updates, dimension_numbers=new, **params), 0
    return rule


def _sort(size, vals, dims, *, dimension, is_stable, num_keys):
    vals = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


def _cumulative(prim):
    def rule(size, vals, dims, *, axis, reverse):
        d = dims[0]
        return prim.bind(vals[0], axis=axis + 1 if d <= axis else axis, reverse=reverse), d
    return rule


register_batching(P["gather"], _gather)
for _name in SCATTERS:
    register_batching(P[_name], _scatter(P[_name]))
register_batching(sort_p, _sort)
for _name in CUMULATIVE:
    register_batching(P[_name], _cumulative(P[_name]))
