"""Batching ``scaled_dot`` as JAX's: every operand's batch dim moves to the front (an
unbatched one is broadcast), which joins the batch dims of the dimension numbers."""
from __future__ import annotations

from traxla.ir.rules.scaled_dot import scaled_dot_p
from traxla.batching.batch_trace import bdim_at_front, register_batching


def _scaled_dot(size, vals, dims, *, dimension_numbers, preferred_element_type):
    vals = [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    (lc, rc), (lb, rb) = dimension_numbers
    shift = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    dn = ((shift(lc), shift(rc)), ((0,) + shift(lb), (0,) + shift(rb)))
    return scaled_dot_p.bind(*vals, dimension_numbers=dn,
                             preferred_element_type=preferred_element_type), 0


register_batching(scaled_dot_p, _scaled_dot)
