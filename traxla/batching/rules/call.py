"""Batching rule of jit: batch the called jaxpr, keep it one equation."""
from __future__ import annotations

from ...ir.rules.call import jit_p
from ...runtime.cache import on_clear
from ...tracer import Tracer
from ..core import batch_jaxpr, natural, register_batching

# As JAX caches ``batch_jaxpr``, a jaxpr batched twice the same way (a helper such as
# ``jnp.where`` called repeatedly under vmap) is batched once, so the batched jaxprs are
# shared and print hoisted. Keys hold the jaxpr itself so that an id is never reused.
_batch_cache: dict = {}
_CACHE_LIMIT = 4096
on_clear(_batch_cache.clear)


# -- jit: batch the called jaxpr, keep it one equation ---------------------------------------

def _jit(size, vals, dims, *, jaxpr, name):
    # as JAX's jit batcher (batch_jaxpr2): inputs stay where they are batched and
    # outputs keep the dims the inner rules chose
    key = (id(jaxpr), size, tuple(dims))
    hit = _batch_cache.get(key)
    if hit is not None and hit[0] is jaxpr:
        batched, out_dims = hit[1], hit[2]
    else:
        batched, out_dims = batch_jaxpr(jaxpr, size, dims, [natural] * len(jaxpr.out_avals))
        if not any(isinstance(c, Tracer) for c in (*jaxpr.consts, *batched.consts)):
            if len(_batch_cache) >= _CACHE_LIMIT:  # bounded: drop all rather than grow
                _batch_cache.clear()
            _batch_cache[key] = (jaxpr, batched, list(out_dims))
    outs = jit_p.bind(*vals, jaxpr=batched, name=name)
    return outs, list(out_dims)


register_batching(jit_p, _jit)
