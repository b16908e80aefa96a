"""Batching rule of jit: batch the called jaxpr, keep it one equation."""
from __future__ import annotations

from traxla.ir.rules.call import jit_p
from traxla.batching.batch_trace import batch_jaxpr, natural, register_batching, rules_for_unbatched


# -- jit: batch the called jaxpr, keep it one equation ---------------------------------------

def _jit(size, vals, dims, *, jaxpr, name):
    # as JAX's jit batcher (batch_jaxpr2): inputs stay where they are batched and outputs
    # keep the dims the inner rules chose; batch_jaxpr caches, so a function jitted twice
    # under one vmap stages one shared batched jaxpr
    batched, out_dims = batch_jaxpr(jaxpr, size, dims, [natural] * len(jaxpr.out_avals))
    outs = jit_p.bind(*vals, jaxpr=batched, name=name)
    return outs, out_dims


register_batching(jit_p, _jit)
rules_for_unbatched.add(jit_p)

