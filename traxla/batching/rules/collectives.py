"""Batching rules for shard_map and the collectives: a vmapped axis is an ordinary
data dimension to them (it is never one of the mesh axes)."""
from __future__ import annotations

from traxla.ir.rules.collectives import (REDUCERS, all_gather_p, axis_index_p, ppermute_p,
                                    psum_scatter_p, shard_map_p)
from traxla.ir.sharding import PartitionSpec
from traxla.batching.batch_trace import batch_jaxpr, bdim_at_front, register_batching


def _elementwise(prim):
    def rule(size, vals, dims, **params):
        return prim.bind(vals[0], **params), dims[0]
    return rule


def _all_gather(size, vals, dims, *, all_gather_dimension, **params):
    x = bdim_at_front(vals[0], dims[0], size)
    return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension + 1, **params), 0


def _psum_scatter(size, vals, dims, *, scatter_dimension, **params):
    x = bdim_at_front(vals[0], dims[0], size)
    return psum_scatter_p.bind(x, scatter_dimension=scatter_dimension + 1, **params), 0


def _never_batched(size, vals, dims, **params):
    return axis_index_p.bind(**params), None


def _shard_map(size, vals, dims, *, jaxpr, mesh, in_specs, out_specs, manual_axes):
    vals = [v if d is None else bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    body, out_dims = batch_jaxpr(jaxpr, size, in_dims, [None] * len(jaxpr.out_avals))
    new_in = tuple(s if d is None else PartitionSpec(None, *s) for s, d in zip(in_specs, in_dims))
    new_out = tuple(s if d is None else PartitionSpec(None, *s) for s, d in zip(out_specs, out_dims))
    outs = shard_map_p.bind(*vals, jaxpr=body, mesh=mesh, in_specs=new_in, out_specs=new_out,
                            manual_axes=manual_axes)
    return outs, out_dims


for _prim in list(REDUCERS.values()) + [ppermute_p]:
    register_batching(_prim, _elementwise(_prim))
register_batching(all_gather_p, _all_gather)
register_batching(psum_scatter_p, _psum_scatter)
register_batching(axis_index_p, _never_batched)
register_batching(shard_map_p, _shard_map)


def _reshard(size, vals, dims, *, dst_sharding, dst_spec):
    x = bdim_at_front(vals[0], dims[0], size)
    mesh, spec = dst_spec
    sharding = None if dst_sharding is None else dst_sharding.with_spec((None,) + tuple(dst_sharding.spec))
    return reshard_p.bind(x, dst_sharding=sharding, dst_spec=(mesh, (None,) + tuple(spec))), 0


from traxla.ir.rules.collectives import reshard_p  # noqa: E402

register_batching(reshard_p, _reshard)
