"""Differentiation rules from user code, as ``jax.interpreters.ad``:
``primitive_jvps[p] = jvp(primals, tangents, **params) -> (primal_out, tangent_out)`` and
``primitive_transposes[p] = transpose(ct, *operands, **params) -> cts`` (tangents and
cotangents may be symbolic ``Zero``s; linear operands are ``UndefinedPrimal``s)."""
from __future__ import annotations

from collections.abc import MutableMapping

from traxla.autodiff.ad import (JVPTrace, JVPTracer, UndefinedPrimal, Zero,  # noqa: F401
                                add_tangents, add_values as add_jaxvals, instantiate,
                                is_undefined, jvp_rules, transpose_rules, zeros_like_aval)
from traxla.autodiff.rules._util import defjvp as _defjvp, defjvp2 as _defjvp2
from traxla.autodiff.rules._util import deflinear2 as _deflinear2
from traxla.ir.rules.ad import add_any_p as add_jaxvals_p  # noqa: F401
from traxla.base.unsupported import fill as _fill
from traxla.ir.jaxpr import Literal
from traxla.autodiff.ad import RoutingTrace
from traxla.tracer import DynamicJaxprTracer
from traxla.tracer.traces import current_trace, set_current_trace
from traxla.interpreters.partial_eval import JaxprTracer

_new = object.__new__


class _Jvps(MutableMapping):
    """JAX's rule signature over traxla's registry: a rule set here gets the primals and
    the tangents as tuples (traxla's own rules get lists); reading a primitive without a
    rule of user code gives traxla's."""

    def __init__(self):
        self._user: dict = {}

    def __setitem__(self, prim, rule):
        self._user[prim] = rule

        def jvp(primals, tangents, **params):
            routing = current_trace()
            if type(routing) is not RoutingTrace:  # jvp: the tangents as they are
                return rule(tuple(_values(primals)), tuple(tangents), **params)
            # linearize/grad: the rule sees its staged tangents as JAX's partial-evaluation
            # tracers (``pe.JaxprTracer``), as under JAX's fallback linearization
            tt = routing.tangent_trace
            with set_current_trace(_UserRuleTrace(routing)):
                out = rule(tuple(_values(primals)),
                           tuple(_view(t, tt, JaxprTracer) for t in tangents), **params)
            return _unview(out)
        jvp_rules[prim] = jvp

    def __getitem__(self, prim):
        return self._user[prim] if prim in self._user else jvp_rules[prim]

    def __delitem__(self, prim):
        del self._user[prim]
        jvp_rules.pop(prim, None)

    def __iter__(self):
        return iter(jvp_rules)

    def __len__(self):
        return len(jvp_rules)


def _values(args):
    """What a rule of user code gets for a constant of a jaxpr being replayed: its value
    (JAX's eval_jaxpr reads a Literal's ``val``), not traxla's ``Literal``."""
    return [a.val if type(a) is Literal else a for a in args]


def _view(x, tt, cls):
    """``x``, a tracer of the tangent trace ``tt``, as an object of class ``cls`` sharing
    its variable; anything else as it is."""
    if isinstance(x, DynamicJaxprTracer) and x._trace is tt and type(x) is not cls:
        view = _new(cls)
        view._trace, view._var, view.aval = x._trace, x._var, x.aval
        return view
    return x


def _unview(x):
    """A rule's result with the ``JaxprTracer`` views in it back as staging tracers."""
    if type(x) is JaxprTracer:
        return _view(x, x._trace, DynamicJaxprTracer)
    if type(x) in (tuple, list):
        return type(x)(_unview(y) for y in x)
    return x


class _UserRuleTrace(RoutingTrace):
    """The routing trace of linearize while a JVP rule of user code runs: operands that are
    ``JaxprTracer`` views go in as the staging tracers they view, tangent results come out as
    views."""

    def __init__(self, routing):
        super().__init__(routing.parent, routing.tangent_trace)

    def process_primitive(self, prim, args, params):
        out = super().process_primitive(prim, [_unview(a) for a in args], params)
        tt = self.tangent_trace
        if prim.multiple_results:
            return [_view(o, tt, JaxprTracer) for o in out]
        return _view(out, tt, JaxprTracer)


primitive_jvps = _Jvps()


class _Transposes(_Jvps):
    """JAX's rule signature over traxla's registry: a rule set here gets an operand that is
    a literal of the jaxpr as its value (traxla's own rules get the Literal)."""

    def __setitem__(self, prim, rule):
        self._user[prim] = rule

        def transpose(ct, *args, **params):
            return rule(ct, *_values(args), **params)
        transpose_rules[prim] = transpose

    def __getitem__(self, prim):
        return self._user[prim] if prim in self._user else transpose_rules[prim]

    def __delitem__(self, prim):
        del self._user[prim]
        transpose_rules.pop(prim, None)

    def __iter__(self):
        return iter(transpose_rules)

    def __len__(self):
        return len(transpose_rules)


primitive_transposes = _Transposes()


def is_undefined_primal(x) -> bool:
    return is_undefined(x)


def instantiate_zeros(t):
    """A symbolic Zero made an array of zeros; other tangents unchanged."""
    return instantiate(t)


def defjvp(prim, *jvp_rules_):
    """One rule per operand: ``rule(tangent, *primals, **params)`` gives that operand's
    contribution to the output tangent."""
    _defjvp(prim, *jvp_rules_)


def defjvp2(prim, *jvp_rules_):
    """As ``defjvp``, each rule also given the primal output: ``rule(tangent, ans,
    *primals, **params)``."""
    _defjvp2(prim, *jvp_rules_)


def deflinear2(prim, transpose_rule):
    """``prim`` is linear in all its operands: its JVP applies it to the tangents, its
    transpose is ``transpose_rule(ct, *operands, **params)`` (a zero ``ct`` gives zeros)."""
    _deflinear2(prim, lambda ct, *args, **params: transpose_rule(ct, *_values(args), **params))


def deflinear(prim, transpose_rule):
    """As ``deflinear2``, with ``transpose_rule(ct, **params)`` (no operands)."""
    _deflinear2(prim, lambda ct, *args, **params: transpose_rule(ct, **params))


def defbilinear(prim, lhs_rule, rhs_rule):
    """``prim(x, y)`` is linear in each operand: its JVP is ``prim(tx, y) + prim(x, ty)``;
    the transpose for an undefined ``x`` is ``lhs_rule(ct, x, y, **params)``, for an
    undefined ``y`` ``rhs_rule(ct, x, y, **params)``."""
    defjvp(prim, lambda g, x, y, **params: prim.bind(g, y, **params),
           lambda g, x, y, **params: prim.bind(x, g, **params))

    def transpose(ct, x, y, **params):
        if is_undefined(x):
            if type(ct) is Zero:
                return Zero(x.aval), None
            out = lhs_rule(ct, x, y, **params)
            return (Zero(x.aval) if type(out) is Zero else out), None
        if type(ct) is Zero:
            return None, Zero(y.aval)
        out = rhs_rule(ct, x, y, **params)
        return None, (Zero(y.aval) if type(out) is Zero else out)
    primitive_transposes[prim] = transpose


def get_primitive_transpose(prim):
    try:
        return primitive_transposes[prim]
    except KeyError as e:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{prim}' not "
            "implemented") from e


# JAX's jvp/linearize of a linear_util WrappedFun (traxla's are traxla.jvp, traxla.linearize)
_fill(globals(), "JAX's linear_util-level jvp and linearize (use jax.jvp and jax.linearize)",
      functions="jvp linearize")

__all__ = ["JVPTrace", "JVPTracer", "primitive_jvps", "primitive_transposes", "Zero", "UndefinedPrimal",
           "is_undefined_primal", "instantiate_zeros", "defjvp", "defjvp2", "deflinear",
           "deflinear2", "defbilinear", "get_primitive_transpose", "add_jaxvals",
           "add_jaxvals_p", "add_tangents", "zeros_like_aval"]
