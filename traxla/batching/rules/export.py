"""Batching of ``call_exported``: an exported program has fixed argument shapes (or
symbolic ones solved per call), so a batch runs it once per lane, in a scan."""
from __future__ import annotations

from traxla.ir.rules.export import call_exported_p, dim_as_value_p
from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules._util import scan_lanes


def _call_exported_batched(size, vals, dims, *, exported):
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    out = scan_lanes(lambda *ops: call_exported_p.bind(*ops, exported=exported), args, dims)
    return list(out), [0] * len(out)


register_batching(call_exported_p, _call_exported_batched)


def _dim_as_value_batched(size, vals, dims, *, dim):
    return dim_as_value_p.bind(dim=dim), None  # no operands: the same for every lane


register_batching(dim_as_value_p, _dim_as_value_batched)
