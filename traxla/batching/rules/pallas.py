"""Batching of a compiled ``pallas_call``: one kernel call per batch lane, in a ``scan``
over the batch (each lane the kernel as it was written). JAX instead adds a grid axis to
the one kernel; the results are the same."""
from __future__ import annotations

from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules._util import scan_lanes
from traxla.ir.rules.pallas import pallas_call_p


def _pallas_call_batched(size, vals, dims, **params):
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    out = scan_lanes(lambda *ops: pallas_call_p.bind(*ops, **params), args, list(dims))
    return list(out), [0] * len(out)


register_batching(pallas_call_p, _pallas_call_batched)
