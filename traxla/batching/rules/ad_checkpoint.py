"""Batching ``remat2`` (the body batched, batched outputs at axis 0, as JAX's
``zero_if_mapped``) and ``name`` (the batch dim passes through)."""
from __future__ import annotations

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.ad_checkpoint import name_p, remat_p
from traxla.batching.batch_trace import batch_jaxpr, register_batching


def _remat(size, vals, dims, *, jaxpr, prevent_cse, differentiated, policy):
    batched, out_dims = batch_jaxpr(ClosedJaxpr(jaxpr, []), size, dims, [None] * len(jaxpr.outvars))
    inner, consts = batched.jaxpr, list(batched.consts)
    if consts:  # closed-over values become leading operands (remat2's jaxpr is open)
        inner = Jaxpr([], list(inner.constvars) + list(inner.invars), inner.outvars, inner.eqns,
                      inner.debug_info)
        if not isinstance(prevent_cse, bool):
            prevent_cse = (False,) * len(consts) + tuple(prevent_cse)
    outs = remat_p.bind(*consts, *vals, jaxpr=inner, prevent_cse=prevent_cse,
                        differentiated=differentiated, policy=policy)
    return outs, out_dims


def _name(size, vals, dims, *, name):
    return name_p.bind(vals[0], name=name), dims[0]


register_batching(remat_p, _remat)
register_batching(name_p, _name)
