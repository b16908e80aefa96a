"""Batching rules of ``top_k`` and ``approx_top_k``: the batch axis stays where it is and
the reduction axis shifts past it (JAX's rules)."""
from __future__ import annotations

from traxla import lax
from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.batching.batch_trace import register_batching


def _top_k(size, vals, dims, *, k, axis):
    (operand,), (bdim,) = vals, dims
    if bdim <= axis:
        axis += 1
    outs = top_k_p.bind(operand, k=k, axis=axis)
    return outs, [bdim, bdim]


def _approx_top_k(size, vals, dims, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    (operand,), (bdim,) = vals, dims
    ndim = len(lax.shape_of(operand))
    dim_map = [d for d in range(ndim) if d != bdim]
    outs = approx_top_k_p.bind(operand, k=k, reduction_dimension=dim_map[reduction_dimension],
                               recall_target=recall_target, is_max_k=is_max_k,
                               reduction_input_size_override=reduction_input_size_override,
                               aggregate_to_topk=aggregate_to_topk)
    return outs, [bdim, bdim]


register_batching(top_k_p, _top_k)
register_batching(approx_top_k_p, _approx_top_k)
