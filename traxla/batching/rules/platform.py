"""``platform_index`` has no operands, so nothing is ever batched."""
from __future__ import annotations

from traxla.ir.rules.platform import platform_index_p
from traxla.batching.batch_trace import register_batching


def _platform_index(size, vals, dims, *, platforms):
    return platform_index_p.bind(platforms=platforms), None


register_batching(platform_index_p, _platform_index)
