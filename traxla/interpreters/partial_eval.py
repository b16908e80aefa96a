"""Partial evaluation from user code, as ``jax.interpreters.partial_eval``:
``trace_to_jaxpr_nounits(wrapped_fun, pvals)`` splits a function of known values
(``PartialVal.known(x)``) and unknown ones (``PartialVal.unknown(aval)``) into the outputs
computable now (known) and a jaxpr of the unknown inputs for the rest.

traxla stages the whole function (known inputs as constants), then evaluates every equation
whose operands are all known, in the caller's trace; the returned jaxpr computes the unknown
outputs. ``trace_to_jaxpr_dynamic`` stages a wrapped function on avals."""
from __future__ import annotations

import typing

from traxla.base.unsupported import fill as _fill

from traxla.autodiff.partial_eval import dce_closed
from traxla.ir.avals import ShapedArray
from traxla.ir.effects import has_effects
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.tracer.staging import DynamicJaxprTracer, trace_to_jaxpr
from traxla.api_util import shaped_abstractify
from traxla.autodiff.partial_eval import _dce_jaxpr, _dce_rules as dce_rules  # noqa: F401



class JaxprTracer(DynamicJaxprTracer):
    """A tangent as a differentiation rule of user code sees it under ``grad``/``linearize``
    (``ad.primitive_jvps``): JAX runs such a rule under its partial-evaluation trace, whose
    tracers are of this class (the rule, or a helper printing its operands, can tell). traxla
    hands the rule these views of its staged tangents; they never leave the rule (see
    ``traxla.interpreters.ad``)."""
    __slots__ = ()

    def _short_repr(self):
        return f"Traced<{self.aval}>"


class PartialVal(tuple):
    """``(aval, None)``: unknown, of type ``aval``; ``(None, const)``: known, ``const``."""

    def __new__(cls, xs):
        pv, const = xs
        if pv is not None and not isinstance(pv, ShapedArray) and not hasattr(pv, "shape"):
            raise TypeError(f"PartialVal: {pv!r} is not an abstract value")
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const) -> "PartialVal":
        return PartialVal((None, const))

    @classmethod
    def unknown(cls, aval) -> "PartialVal":
        return PartialVal((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self):
        """The known value, or None."""
        return self[1] if self[0] is None else None

    def get_aval(self):
        """The abstract value: the unknown's type, or the known value's."""
        pv, const = self
        return shaped_abstractify(const) if pv is None else pv


def trace_to_jaxpr_dynamic(fun, in_avals, *, keep_inputs=None):
    """Stages ``fun`` (a ``WrappedFun`` of flat arguments) on ``in_avals``; returns
    ``(jaxpr, out_avals, consts)``."""
    closed = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), list(in_avals),
                            fun.debug_info)
    return closed.jaxpr, closed.jaxpr.out_avals, closed.consts


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Returns ``(jaxpr, out_pvals, consts)``: ``out_pvals[i]`` is known when output ``i``
    depends on no unknown input (and is not instantiated); ``jaxpr`` (with ``consts`` for
    its constvars) computes the unknown outputs from the unknown inputs."""
    pvals = [p if isinstance(p, PartialVal) else PartialVal(p) for p in pvals]
    unknown = [i for i, p in enumerate(pvals) if not p.is_known()]

    def staged(*unknown_args):
        args = [p[1] for p in pvals]
        for i, u in zip(unknown, unknown_args):
            args[i] = u
        return list(fun.call_wrapped(*args))

    closed = trace_to_jaxpr(staged, [pvals[i][0] for i in unknown], fun.debug_info,
                            forwards=False)
    jaxpr = closed.jaxpr
    env = dict(zip(jaxpr.constvars, closed.consts))
    known = set(jaxpr.constvars)
    for eqn in jaxpr.eqns:
        if has_effects(eqn) or not all(isinstance(x, Literal) or x in known
                                       for x in eqn.invars):
            continue
        outs = eqn.primitive.bind(*[x.val if isinstance(x, Literal) else env[x]
                                    for x in eqn.invars], **eqn.params)
        for v, o in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            env[v] = o
            known.add(v)
    n_out = len(jaxpr.outvars)
    inst = [instantiate] * n_out if isinstance(instantiate, bool) else list(instantiate)
    out_pvals, keep = [], []
    for v, force in zip(jaxpr.outvars, inst):
        if not force and isinstance(v, Literal):
            out_pvals.append(PartialVal.known(v.val))
            keep.append(False)
        elif not force and v in known:
            out_pvals.append(PartialVal.known(env[v]))
            keep.append(False)
        else:
            out_pvals.append(PartialVal.unknown(v.aval))
            keep.append(True)
    if not any(keep):
        return Jaxpr([], jaxpr.invars, [], [], jaxpr.debug_info), out_pvals, []
    outs = [v for v, k in zip(jaxpr.outvars, keep) if k]
    rest, _ = dce_closed(ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, outs, jaxpr.eqns,
                                           jaxpr.debug_info), closed.consts),
                         [True] * len(outs), [True] * len(jaxpr.invars))
    return rest.jaxpr, out_pvals, rest.consts


def dce_jaxpr(jaxpr: Jaxpr, used_outputs, instantiate=False):
    """``(jaxpr without what the unused outputs need, used inputs)`` (as JAX's)."""
    inst = ([instantiate] * len(jaxpr.invars) if isinstance(instantiate, bool)
            else list(instantiate))
    return _dce_jaxpr(jaxpr, list(used_outputs), inst)


def dce_jaxpr_consts(jaxpr: Jaxpr, used_outputs, instantiate=False):
    """As ``dce_jaxpr``, the constvars counted with the inputs: ``(jaxpr, used constvars,
    used inputs)``; the used constvars stay constvars (as JAX's)."""
    nc = len(jaxpr.constvars)
    flat = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
                 jaxpr.debug_info)
    new, used = dce_jaxpr(flat, used_outputs, instantiate)
    used_consts, used_inputs = used[:nc], used[nc:]
    k = sum(used_consts)
    new = Jaxpr(new.invars[:k], new.invars[k:], new.outvars, new.eqns, new.debug_info)
    return new, used_consts, used_inputs


# DCE rules by primitive, ``rule(used_outputs, eqn) -> (used_inputs, new_eqn or None)``:
# traxla's own table, so a rule set here is the one dce_jaxpr applies (as JAX's).
Val = typing.Any

# JAX's partial-evaluation rule tables and call-primitive DCE rules: traxla's partial
# evaluation and DCE of call primitives are its own.
_fill(globals(), "JAX's partial-evaluation rule tables (traxla's partial evaluation is its own)",
      functions="dce_jaxpr_call_rule dce_jaxpr_closed_call_rule",
      constants="custom_partial_eval_rules partial_eval_jaxpr_custom_rules")

__all__ = ["PartialVal", "JaxprTracer", "DynamicJaxprTracer", "trace_to_jaxpr_nounits",
           "trace_to_jaxpr_dynamic", "dce_jaxpr", "dce_jaxpr_consts", "dce_rules", "Val"]
