"""Batching ``reduce_precision`` (elementwise) and ``optimization_barrier`` (operands
keep their batch dims)."""
from __future__ import annotations

from traxla.ir.rules.optimization import optimization_barrier_p, reduce_precision_p
from traxla.batching.batch_trace import register_batching


def _reduce_precision(size, vals, dims, **params):
    return reduce_precision_p.bind(vals[0], **params), dims[0]


def _optimization_barrier(size, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


register_batching(reduce_precision_p, _reduce_precision)
register_batching(optimization_barrier_p, _optimization_barrier)
