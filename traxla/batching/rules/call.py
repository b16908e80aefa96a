"""Batching rule of jit: batch the called jaxpr, keep it one equation."""
from __future__ import annotations

from traxla.ir.jaxpr import ClosedJaxpr
from traxla.ir.rules.call import call_p, closed_call_p, jit_p
from traxla.tracer.call_primitives import bind_call_jaxpr
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



def _call(prim, size, vals, dims, *, call_jaxpr, **params):
    """JAX's ``call`` / ``closed_call``: as jit's, the batched jaxpr called by the same
    primitive."""
    closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
    batched, out_dims = batch_jaxpr(closed, size, dims, [natural] * len(closed.out_avals))
    return bind_call_jaxpr(prim, vals, batched), out_dims


for _p in (call_p, closed_call_p):
    register_batching(_p, lambda size, vals, dims, _p=_p, **params: _call(_p, size, vals, dims,
                                                                          **params))
    rules_for_unbatched.add(_p)
del _p
