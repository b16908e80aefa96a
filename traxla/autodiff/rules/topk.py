"""JVP rules of ``top_k`` and ``approx_top_k``: the tangent is gathered at the selected
indices (JAX's rules); the indices have a zero tangent. Neither is linear, so neither has a
transpose rule."""
from __future__ import annotations

from traxla import lax
from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.autodiff.ad import Zero, jvp_rules, zero_of
from traxla.autodiff.rules.indexing import _GDN, _Mode, _gather


def _gather_along(tangent, idxs, axis):
    idx_shape = lax.shape_of(idxs)
    rank = len(idx_shape)
    batch = tuple(i for i in range(rank) if i != axis)
    dnums = _GDN(offset_dims=(), collapsed_slice_dims=(axis,), operand_batching_dims=batch,
                 start_indices_batching_dims=batch, start_index_map=(axis,))
    return _gather(tangent, lax.reshape(idxs, idx_shape + (1,)), dnums, (1,) * rank,
                   mode=_Mode.PROMISE_IN_BOUNDS)


def _top_k_jvp(primals, tangents, *, k, axis):
    (operand,), (tangent,) = primals, tangents
    values, idxs = top_k_p.bind(operand, k=k, axis=axis)
    if type(tangent) is Zero:
        return [values, idxs], [zero_of(values), zero_of(idxs)]
    return [values, idxs], [_gather_along(tangent, idxs, axis), zero_of(idxs)]


def _approx_top_k_jvp(primals, tangents, **params):
    (operand,), (tangent,) = primals, tangents
    values, idxs = approx_top_k_p.bind(operand, **params)
    if type(tangent) is Zero:
        return [values, idxs], [zero_of(values), zero_of(idxs)]
    axis = params["reduction_dimension"] % len(lax.shape_of(idxs))
    return [values, idxs], [_gather_along(tangent, idxs, axis), zero_of(idxs)]


jvp_rules[top_k_p] = _top_k_jvp
jvp_rules[approx_top_k_p] = _approx_top_k_jvp
