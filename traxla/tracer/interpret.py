"""Evaluating a jaxpr by binding its equations in the current trace: how a
transformation re-runs a jaxpr under itself (vmap of a jit, of a branch...)."""
from __future__ import annotations

import threading

from traxla.ir.jaxpr import ClosedJaxpr, Literal

# How many jaxprs are being re-run. JAX re-runs each equation under the context it was
# recorded in, which differs from a live trace's: its caches of jaxpr transformations (the
# batching of a jit, ...) keep the two apart, and so do traxla's (a jaxpr batched from a
# live trace and the same jaxpr batched inside a re-run one are two jaxprs, as in JAX).
class _ReplayDepth(threading.local):
    depth = 0


_replay = _ReplayDepth()


def replaying() -> bool:
    """Whether a jaxpr is being re-run (``eval_jaxpr``) rather than traced live."""
    return _replay.depth > 0


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
    _replay.depth += 1
    try:
        for eqn in jaxpr.eqns:
            out = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
            if eqn.primitive.multiple_results:
                for v, o in zip(eqn.outvars, out):
                    env[v] = o
            else:
                env[eqn.outvars[0]] = out
    finally:
        _replay.depth -= 1
    # a literal output is returned as its value, as JAX's eval_jaxpr does (a Literal is an
    # atom of the IR, not a value: closure_convert's and jaxpr_as_fun's callers see it)
    return [x.val if type(x) is Literal else env[x] for x in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
    return lambda *args: eval_jaxpr(closed, (), *args)
