"""Batching ``sharding_constraint``: the batch dimension is left unconstrained."""
from __future__ import annotations

from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.batching.batch_trace import register_batching


def _sharding_constraint(size, vals, dims, *, sharding, unconstrained_dims, **params):
    d = dims[0]
    spec = list(sharding.spec)
    spec.insert(min(d, len(spec)), None)
    new = type(sharding)(sharding.mesh, type(sharding.spec)(*spec), sharding.memory_kind)
    dims_ = frozenset({d} | {u + (u >= d) for u in unconstrained_dims})
    return sharding_constraint_p.bind(vals[0], sharding=new, unconstrained_dims=dims_,
                                      **params), d


register_batching(sharding_constraint_p, _sharding_constraint)
