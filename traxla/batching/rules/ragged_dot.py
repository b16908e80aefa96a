"""Batching ``ragged_dot_general`` as JAX: lhs, rhs and group_sizes all batched along
their first axis (anything else is JAX's NotImplementedError); the batch axis becomes a
batch dimension of the product, after the group dimension in the contracting mode."""
from __future__ import annotations

import numpy as np

from traxla.batching.batch_trace import register_batching
from traxla.ir.rules.ragged_dot import (RaggedDotDimensionNumbers, RaggedDotMode,
                                        ragged_dot_general_p, ragged_dot_mode_and_dim)
from traxla.lax.ragged_dot import ragged_dot_general


def _ragged_dot_general(size, vals, dims, *, ragged_dot_dimension_numbers, precision,
                        preferred_element_type, group_offset, out_sharding):
    if not all(d == 0 for d in dims):
        raise NotImplementedError("ragged_dot vmap over any dim but 0 - NYI")
    lhs, rhs, group_sizes = vals
    dn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    # (NumPy integers, as JAX's ``bump_dims``: the vmapped jaxpr prints them)
    bump = lambda ds: tuple(np.add(ds, np.greater_equal(ds, 0))) if ds else ()  # noqa: E731
    new = RaggedDotDimensionNumbers(
        dot_dimension_numbers=((bump(lc), bump(rc)), ((0,) + bump(lb), (0,) + bump(rb))),
        lhs_ragged_dimensions=bump(dn.lhs_ragged_dimensions),
        rhs_group_dimensions=bump(dn.rhs_group_dimensions))
    out = ragged_dot_general(lhs, rhs, group_sizes, new, precision=precision,
                             preferred_element_type=preferred_element_type)
    lhs_rank = len(lhs.shape) - 1
    contracting = ragged_dot_mode_and_dim(lhs_rank, dn)[0] is RaggedDotMode.RAGGED_CONTRACTING
    return out, 1 if contracting else 0


register_batching(ragged_dot_general_p, _ragged_dot_general)
