"""Helpers shared by the batching rules: running a primitive once per lane of the batch."""
from __future__ import annotations

from traxla.lax.control_flow import scan


def scan_lanes(bind_one, args, dims, unroll=1):
    """``bind_one(*operands)`` once per lane, in a scan over the batched ``args`` (batch dim
    at the front; the unbatched ones, whose ``dims`` entry is None, passed whole): the
    outputs stacked along a leading batch dim."""
    batched = [d is not None for d in dims]
    fixed = [x for x, b in zip(args, batched) if not b]
    mapped = [x for x, b in zip(args, batched) if b]

    def one_lane(carry, lane):
        it_fixed, it_lane = iter(fixed), iter(lane)
        merged = [next(it_lane) if b else next(it_fixed) for b in batched]
        return carry, bind_one(*merged)
    _, out = scan(one_lane, (), mapped, unroll=unroll)
    return out
