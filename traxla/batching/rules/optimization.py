"""Batching ``reduce_precision`` (elementwise), ``optimization_barrier`` (operands
keep their batch dims), ``stage`` (elementwise) and ``dce_sink`` (dropped: JAX's batching
rule binds nothing, so a batched sink leaves no equation)."""
from __future__ import annotations

from traxla.ir.rules.optimization import (dce_sink_p, optimization_barrier_p, reduce_precision_p,
                                         stage_p)
from traxla.batching.batch_trace import register_batching


def _reduce_precision(size, vals, dims, **params):
    return reduce_precision_p.bind(vals[0], **params), dims[0]


def _optimization_barrier(size, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


register_batching(reduce_precision_p, _reduce_precision)
register_batching(optimization_barrier_p, _optimization_barrier)
register_batching(stage_p, lambda size, vals, dims: (stage_p.bind(vals[0]), dims[0]))
register_batching(dce_sink_p, lambda size, vals, dims, **params: ([], []))
