"""Batching rule of ``scaled_matmul_wrapper`` (JAX's): the vmapped axis joins the leading
batch axis of all four operands, one 3-D ``scaled_matmul_wrapper`` runs, and its result is
reshaped back. JAX requires every operand batched at the same leading position; traxla
first moves a batch axis found elsewhere, or materializes an unbatched operand's, to 0."""
from __future__ import annotations

import math

from traxla import lax
from traxla.ir.rules.scaled_matmul import scaled_matmul_wrapper_p
from traxla.batching.batch_trace import bdim_at_front, register_batching


def _scaled_matmul_wrapper(size, vals, dims, *, preferred_element_type):
    if len(set(dims)) != 1 or dims[0] is None or dims[0] > 1:
        vals, dims = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)], [0] * 4
    lhs, rhs, lhs_scales, rhs_scales = vals
    *batch, lhs_rows, contracting = lax.shape_of(lhs)
    *_, scale_blocks = lax.shape_of(lhs_scales)
    *_, rhs_rows, _ = lax.shape_of(rhs)
    new_batch = math.prod(batch)
    lhs = lax.reshape(lhs, (new_batch, lhs_rows, contracting))
    lhs_scales = lax.reshape(lhs_scales, (new_batch, lhs_rows, scale_blocks))
    rhs = lax.reshape(rhs, (new_batch, rhs_rows, contracting))
    rhs_scales = lax.reshape(rhs_scales, (new_batch, rhs_rows, scale_blocks))
    out, = scaled_matmul_wrapper_p.bind(lhs, rhs, lhs_scales, rhs_scales,
                                        preferred_element_type=preferred_element_type)
    return [lax.reshape(out, (*batch, lhs_rows, rhs_rows))], [dims[0]]


register_batching(scaled_matmul_wrapper_p, _scaled_matmul_wrapper)
