"""Batching rules for the special-function, complex-number and ``tile`` primitives."""
from __future__ import annotations

from traxla.ir.rules.special import P
from traxla.batching.batch_trace import register_batching
from traxla.batching.rules.indexing import _scatter
from traxla.batching.rules.elementwise import _broadcasting, _vectorized

for _name in ("lgamma", "digamma", "erfc", "square", "real", "imag", "conj"):
    register_batching(P[_name], _vectorized(P[_name]))
register_batching(P["complex"], _broadcasting(P["complex"]))


def _tile(size, vals, dims, *, reps):
    x, = vals
    d, = dims
    new_reps = list(reps)
    new_reps.insert(d, 1)
    return P["tile"].bind(x, reps=tuple(new_reps)), d


register_batching(P["tile"], _tile)
register_batching(P["scatter-sub"], _scatter(P["scatter-sub"]))

for _name in ("bessel_i0e", "bessel_i1e"):
    register_batching(P[_name], _vectorized(P[_name]))
for _name in ("igamma", "igammac", "igamma_grad_a", "polygamma", "zeta",
              "regularized_incomplete_beta"):
    register_batching(P[_name], _broadcasting(P[_name]))
