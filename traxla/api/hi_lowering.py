"""Staged high-level (hijax) values, and how a jaxpr of them becomes a program of arrays.

As in JAX, a value of a type registered with ``jax.experimental.hijax.register_hitype``
whose abstract value is an immutable ``HiType`` (the docs' quantized ``QArray``) is one
jaxpr variable of that type when it is staged: a ``jit`` argument or result, or the result
of a ``VJPHiPrimitive`` (``b:q8[2,3] = call_hi_primitive[_prim=Quantize[{}]] a``). Such a
jaxpr cannot be compiled as it is: ``lower_closed`` re-runs it (``eval_hi``) in a trace that
lowers as it goes (``requires_low``, JAX's ``pe.lower_jaxpr``): each high-level argument
is its ``lo_ty`` arrays, rebuilt into a value with ``raise_val``; each hijax primitive
runs its ``expand`` on such values; each high-level result is taken apart with
``lower_val``. ``HiProgram`` runs a ``jit`` whose jaxpr is high: arguments lowered, the
program of arrays called, results raised.

Mutable high-level types (``has_qdd``: flax's Variables) keep the older scheme of
``hijax_args.py``: lowered at the ``jit`` boundary, their state written back."""
from __future__ import annotations

import weakref
from itertools import islice

from traxla import tree_util
from traxla.autodiff.hi_primitive import call_hi_primitive_p
from traxla.ir.jaxpr import ClosedJaxpr, Literal
from traxla.ir.rules.call import jit_p
from traxla.tracer import make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import _replay
from traxla.tracer.traces import current_trace


def is_high(aval) -> bool:
    return getattr(aval, "is_high", False) is True


def _is_high_uncached(closed) -> bool:
    jaxpr = closed.jaxpr
    for v in (*jaxpr.constvars, *jaxpr.invars):
        if is_high(v.aval):
            return True
    for x in jaxpr.outvars:
        if is_high(x.aval):
            return True
    for eqn in jaxpr.eqns:
        if eqn.primitive is call_hi_primitive_p:
            if any(is_high(v.aval) for v in (*eqn.invars, *eqn.outvars)):
                return True
        elif eqn.primitive is jit_p and jaxpr_is_high(eqn.params["jaxpr"]):
            return True
    return False


_high_cache = weakref.WeakKeyDictionary()  # closed jaxpr -> whether it is high


def jaxpr_is_high(closed) -> bool:
    """Whether ``closed`` stages a high-level value (a ``jit``'s, at any depth)."""
    hit = _high_cache.get(closed)
    if hit is None:
        hit = _high_cache[closed] = _is_high_uncached(closed)
    return hit


def lower_vals(avals, vals) -> list:
    """The low-level values of ``vals`` (high-level ones taken apart)."""
    out = []
    for a, x in zip(avals, vals):
        if is_high(a):
            out.extend(a.lower_val(x))
        else:
            out.append(x)
    return out


def raise_vals(avals, lo_vals) -> list:
    """``lower_vals`` undone: each high-level value rebuilt from its ``lo_ty`` values."""
    it = iter(lo_vals)
    return [a.raise_val(*islice(it, len(a.lo_ty()))) if is_high(a) else next(it)
            for a in avals]


def lo_avals(avals) -> list:
    return [lo for a in avals for lo in (a.lo_ty() if is_high(a) else [a])]


def eval_hi(closed: ClosedJaxpr, args) -> list:
    """Runs ``closed`` in the current trace on ``args`` (high-level values as objects):
    in a lowering trace, each hijax primitive runs its ``expand``; a ``jit`` whose jaxpr
    is high runs inline."""
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))

    def read(x):
        return x if type(x) is Literal else env[x]

    _replay.depth += 1
    try:
        for eqn in jaxpr.eqns:
            invals = [read(x) for x in eqn.invars]
            if eqn.primitive is jit_p and jaxpr_is_high(eqn.params["jaxpr"]):
                outs = eval_hi(eqn.params["jaxpr"], invals)
            else:
                outs = eqn.primitive.bind(*invals, **eqn.params)
                if not eqn.primitive.multiple_results:
                    outs = [outs]
            env.update(zip(eqn.outvars, outs))
    finally:
        _replay.depth -= 1
    return [x.val if type(x) is Literal else env[x] for x in jaxpr.outvars]


def lowering_fun(closed: ClosedJaxpr):
    """A function of the low-level values of ``closed``'s arguments to those of its
    results, which lowers as it runs (to be traced: ``jit`` or ``trace_to_jaxpr``)."""
    in_avals, out_avals = list(closed.in_avals), list(closed.out_avals)

    def lowered(*lo_args):
        trace = current_trace()
        previous = trace.requires_low
        trace.requires_low = True
        try:
            outs = eval_hi(closed, raise_vals(in_avals, lo_args))
        finally:
            trace.requires_low = previous
        return lower_vals(out_avals, outs)

    return lowered


def lower_closed(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The jaxpr of arrays that ``closed`` (a high one) stands for."""
    dbg = closed.jaxpr.debug_info
    return trace_to_jaxpr(lowering_fun(closed), lo_avals(closed.in_avals),
                          make_debug_info(lowering_fun, getattr(dbg, "traced_for", "jit"), ()))


class HiProgram:
    """A ``jit`` cache entry whose traced jaxpr is high: it runs the lowered program
    (a ``jit`` of its own) on the arguments' low-level values and raises the results."""

    __slots__ = ("closed", "out_tree", "inner")

    def __init__(self, jitted, closed, out_tree):
        if jitted.in_shardings is not None or jitted.out_shardings is not None:
            raise NotImplementedError(
                "jit with in_shardings or out_shardings of a program that stages high-level "
                "(hijax) values: place the arguments instead (device_put)")
        self.closed, self.out_tree = closed, out_tree
        fun = lowering_fun(closed)
        fun.__name__ = fun.__qualname__ = jitted.name
        # (the arrays' program: the jit's options that still apply to it; shardings and
        # donation name the high-level arguments, and do not)
        self.inner = type(jitted)(fun, keep_unused=jitted.keep_unused,
                                  compiler_options=jitted.compiler_options)
        self.inner.name = jitted.name

    def __call__(self, leaves):
        outs = self.inner(*lower_vals(self.closed.in_avals, leaves))
        return tree_util.tree_unflatten(self.out_tree,
                                        raise_vals(self.closed.out_avals, outs))

