"""Batching ``composite``: the decomposition is batched and stays one composite."""
from __future__ import annotations

from traxla.ir.rules.composite import composite_p
from traxla.batching.batch_trace import batch_jaxpr, natural, register_batching


def _composite(size, vals, dims, *, name, attributes, version, jaxpr):
    batched, out_dims = batch_jaxpr(jaxpr, size, dims, [natural] * len(jaxpr.out_avals))
    return composite_p.bind(*vals, name=name, attributes=attributes, version=version,
                            jaxpr=batched), out_dims


register_batching(composite_p, _composite)
