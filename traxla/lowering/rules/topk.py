"""Lowering of ``top_k`` (CHLO's top_k along the last axis, transposing other axes there
and back, as JAX) and ``approx_top_k`` (the exact fallback JAX's CPU lowering asks XLA for:
the k largest, or the k smallest as the k largest of the negation)."""
from __future__ import annotations

from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.lowering.mlir import chlo, hlo, ir
from traxla.lowering.registry import register_lowering


def _i64(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))


def _top_k_last_axis(operand, k, axis, ndim):
    perm = None
    if axis != ndim - 1:
        perm = list(range(ndim))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        operand = hlo.transpose(operand, ir.DenseI64ArrayAttr.get(perm))
    results = list(chlo.top_k(operand, _i64(k)))
    if perm is not None:
        results = [hlo.transpose(r, ir.DenseI64ArrayAttr.get(perm)) for r in results]
    return results


def _top_k(ctx, operand, *, k, axis):
    return _top_k_last_axis(operand, k, axis, len(ctx.avals_in[0].shape))


def _approx_top_k(ctx, operand, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    ndim = len(ctx.avals_in[0].shape)
    axis = reduction_dimension % ndim
    if is_max_k:
        return _top_k_last_axis(operand, k, axis, ndim)
    values, indices = _top_k_last_axis(hlo.negate(operand), k, axis, ndim)
    return [hlo.negate(values), indices]


register_lowering(top_k_p, _top_k)
register_lowering(approx_top_k_p, _approx_top_k)
