"""Evaluating a jaxpr by binding its equations in the current trace: how a
transformation re-runs a jaxpr under itself (vmap of a jit, of a branch...)."""
from __future__ import annotations

from ..ir.core import ClosedJaxpr, Literal


def eval_jaxpr(jaxpr, consts, *args):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr, consts = jaxpr.jaxpr, list(jaxpr.consts) + list(consts)
    env = {}

    def read(x):
        return x if type(x) is Literal else env[x]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outvars, out):
                env[v] = o
        else:
            env[eqn.outvars[0]] = out
    return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
    return lambda *args: eval_jaxpr(closed, (), *args)
