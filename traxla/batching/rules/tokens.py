"""Batching ``create_token`` and ``after_all``: a token holds no data, so it is never
batched (JAX has no batching rule for either; a batched token cannot arise)."""
from __future__ import annotations

from traxla.batching.batch_trace import register_batching
from traxla.ir.rules.tokens import after_all_p, create_token_p


def _unbatched(prim):
    def rule(size, vals, dims, **params):
        if any(d is not None for d in dims):
            raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented: "
                                      "a token cannot be batched.")
        return prim.bind(*vals, **params), None
    return rule


register_batching(create_token_p, _unbatched(create_token_p))
register_batching(after_all_p, _unbatched(after_all_p))
