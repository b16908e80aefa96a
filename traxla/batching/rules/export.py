"""Batching of ``call_exported``: an exported program has fixed argument shapes (or
symbolic ones solved per call), so a batch runs it once per lane, in a scan."""
from __future__ import annotations

from traxla.ir.rules.export import call_exported_p, dim_as_value_p
from traxla.lax.control_flow import scan
from traxla.batching.batch_trace import moveaxis, register_batching


def _call_exported_batched(size, vals, dims, *, exported):
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    batched = [d is not None for d in dims]
    fixed = [x for x, b in zip(args, batched) if not b]
    mapped = [x for x, b in zip(args, batched) if b]

    def one_lane(carry, lane):
        it_fixed, it_lane = iter(fixed), iter(lane)
        merged = [next(it_lane) if b else next(it_fixed) for b in batched]
        return carry, call_exported_p.bind(*merged, exported=exported)
    _, out = scan(one_lane, (), mapped)
    return list(out), [0] * len(out)


register_batching(call_exported_p, _call_exported_batched)


def _dim_as_value_batched(size, vals, dims, *, dim):
    return dim_as_value_p.bind(dim=dim), None  # no operands: the same for every lane


register_batching(dim_as_value_p, _dim_as_value_batched)
