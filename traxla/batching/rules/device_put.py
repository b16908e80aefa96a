"""Batching ``device_put``: each operand keeps its batch dimension."""
from __future__ import annotations

from traxla.ir.rules.device_put import device_put_p
from traxla.batching.batch_trace import register_batching


def _device_put(size, vals, dims, **params):
    return device_put_p.bind(*vals, **params), list(dims)


register_batching(device_put_p, _device_put)
