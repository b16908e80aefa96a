"""Batching rule of jit: batch the called jaxpr, keep it one equation."""
from __future__ import annotations

import weakref

from ...ir.rules.call import jit_p
from ...tracer import Tracer
from ..core import batch_jaxpr, natural, register_batching

# called jaxpr -> {(axis size, in dims): (batched jaxpr, out dims)}. As JAX's cached
# batch_jaxpr2: a function jitted twice under one vmap stages one shared batched jaxpr.
_batched_jaxprs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# -- jit: batch the called jaxpr, keep it one equation ---------------------------------------

def _jit(size, vals, dims, *, jaxpr, name):
    # as JAX's jit batcher (batch_jaxpr2): inputs stay where they are batched and
    # outputs keep the dims the inner rules chose
    cacheable = not any(isinstance(c, Tracer) for c in jaxpr.consts)
    key = (size, tuple(dims))
    cached = _batched_jaxprs.get(jaxpr, {}).get(key) if cacheable else None
    if cached is None:
        cached = batch_jaxpr(jaxpr, size, dims, [natural] * len(jaxpr.out_avals))
        if cacheable:
            _batched_jaxprs.setdefault(jaxpr, {})[key] = cached
    batched, out_dims = cached
    outs = jit_p.bind(*vals, jaxpr=batched, name=name)
    return outs, list(out_dims)


register_batching(jit_p, _jit)

