"""Taylor-mode automatic differentiation (``jax.experimental.jet``): a trace whose tracers
carry a value and the first ``order`` coefficients of its truncated Taylor series, and the
table of per-primitive rules that propagate them (filled by ``traxla.jet.rules``).

``jet(fun, primals, series)`` returns ``fun(*primals)`` and the derivative terms of
``fun`` along the input curve, as JAX's: each input series ``(h_1, ..., h_K)`` holds the
derivatives ``d^k/dt^k h(t)`` at ``t = 0`` (with ``factorial_scaled=False``, ``jet2``:
the plain Taylor coefficients ``h_k / k!``). A rule receives primals and series of its
operands (zero series instantiated as zeros), runs in the enclosing trace, and returns
the primal output and its series. A primitive with no rule raises ``KeyError`` naming it
(JAX's error); control flow (``cond``, ``while``, ``scan``) has none, as in JAX.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from traxla import primitives as prims
from traxla import tree_util
from traxla.autodiff.ad import JVPTracer
from traxla.autodiff.custom import custom_jvp_call_p, custom_vjp_call_p
from traxla.errors import UnexpectedTracerError
from traxla.ir.jaxpr import Literal
from traxla.tracer import Trace, Tracer, current_trace, set_current_trace
from traxla.tracer.interpret import eval_jaxpr


class ZeroTerm:
    """One Taylor coefficient known to be zero (JAX's ``zero_term``)."""


zero_term = ZeroTerm()
tree_util.register_pytree_node(ZeroTerm, lambda z: ((), None), lambda _, xs: zero_term)


class ZeroSeries:
    """A whole series known to be zero: the value does not move (JAX's ``zero_series``)."""


zero_series = ZeroSeries()
tree_util.register_pytree_node(ZeroSeries, lambda z: ((), None), lambda _, xs: zero_series)

# primitive -> rule(primals_in, series_in, **params) -> (primal_out, series_out)
jet_rules: dict = {}


class JetTracer(Tracer):
    __slots__ = ("primal", "terms")

    def __init__(self, trace, primal, terms):
        assert type(terms) in (ZeroSeries, list, tuple)
        self._trace = trace
        self.primal = primal
        self.terms = terms

    # a value with a primal, as a JVPTracer: its type, origin and concrete value are the primal's
    aval = JVPTracer.aval
    _origin_msg = JVPTracer._origin_msg
    to_concrete_value = JVPTracer.to_concrete_value

    def _short_repr(self):
        return f"JetTracer(primal={self.aval.str_short()}, order={self._trace.order})"


class JetTrace(Trace):
    def __init__(self, parent, order):
        self.parent = parent
        self.order = order

    def to_primal_terms_pair(self, val):
        if isinstance(val, JetTracer) and val._trace is self:
            return val.primal, val.terms
        if isinstance(val, Tracer) and not val._trace.alive:
            raise val._trace.leak_error(val)
        return val, zero_series

    def process_primitive(self, prim, args, params):
        primals_in, series_in = [], []
        for a in args:
            p, s = self.to_primal_terms_pair(a)
            primals_in.append(p)
            series_in.append(s)
        if all(s is zero_series for s in series_in):
            with set_current_trace(self.parent):
                return prim.bind(*primals_in, **params)
        reentered = _reentrant_rules.get(prim)
        if reentered is not None:
            return reentered(self, args, params)
        rule = jet_rules.get(prim)
        if rule is None:
            raise KeyError(f"jet rule for primitive '{prim.name}' not implemented: jet "
                           "propagates Taylor series only through the primitives of "
                           "traxla.jet.jet_rules")
        order = self.order
        with set_current_trace(self.parent):
            primals_in = [_literal_value(p) if type(p) is Literal else p for p in primals_in]
            # (one zeros per term, as JAX instantiates them)
            series_in = [[_zeros(x) if t is zero_term else t
                          for t in ([zero_term] * order if s is zero_series else s)]
                         for x, s in zip(primals_in, series_in)]
            primal_out, terms_out = rule(primals_in, series_in, **params)
        if prim.multiple_results:
            return [JetTracer(self, p, ts) for p, ts in zip(primal_out, terms_out)]
        return JetTracer(self, primal_out, terms_out)

    def leak_error(self, tracer):
        return UnexpectedTracerError(
            "Encountered an unexpected tracer: a value of a jet "
            f"({tracer.aval.str_short(short_dtypes=False)}) escaped the function passed to "
            "jet and was used after it returned. Return values from the function instead of "
            "storing them.")


def _literal_value(lit):
    """A literal operand (an eager scalar, a re-run jaxpr's constant) as the value JAX's
    rules see: a weakly typed one as a Python scalar, a typed one as a NumPy value (so that
    the rules' arithmetic on constants folds in NumPy, as in JAX)."""
    v = lit.val
    if lit.aval.weak_type and not np.shape(v) and type(v) not in (bool, int, float, complex):
        return np.asarray(v).item()
    return v


def _zeros(x):
    """Zeros of ``x``'s shape and (canonical, strong) dtype: JAX's ``jnp.zeros(np.shape(x),
    dtype=jnp.result_type(x))``."""
    return prims.full(np.shape(x) if not hasattr(x, "aval") else prims.aval_of(x).shape, 0,
                      prims.dtype_of(x))


def _call_inline(trace, args, params):
    # As JAX's process_custom_jvp_call / process_custom_vjp_call: the custom rules are
    # ignored and the function itself is expanded in Taylor series.
    with set_current_trace(trace):
        return eval_jaxpr(params["call_jaxpr"], (), *args)


_reentrant_rules = {custom_jvp_call_p: _call_inline, custom_vjp_call_p: _call_inline}


def jet_flat(fun, order, primals, series):
    """Runs ``fun`` on jet tracers of ``primals`` and ``series``; returns the output leaves'
    primals, their series (a zero series instantiated as zeros, as JAX's ``jet_fun``) and
    the output tree."""
    parent = current_trace()
    trace = JetTrace(parent, order)
    tracers = [JetTracer(trace, p, s) for p, s in zip(primals, series)]
    try:
        with set_current_trace(trace):
            ans = fun(*tracers)
        leaves, out_tree = tree_util.tree_flatten(ans)
        pairs = [trace.to_primal_terms_pair(x) for x in leaves]
    finally:
        trace.invalidate()
    out_primals = [p for p, _ in pairs]
    out_terms = [[prims.full_like(p, 0)] * order if s is zero_series else list(s)
                 for p, s in pairs]
    return out_primals, out_terms, out_tree


def fact(n):
    return prims.exp(prims.lgamma(n + 1.))


def jet(fun, primals, series, factorial_scaled=True, **_):
    r"""Taylor-mode higher-order automatic differentiation (``jax.experimental.jet.jet``).

    Args:
      fun: function to be differentiated; its arguments are arrays or scalars, its result
        an array, scalar or standard Python container of them.
      primals: the point: a tuple or list with one array per positional argument of ``fun``.
      series: one tuple or list of terms per primal, all of the same length (the order).
      factorial_scaled: if True (the default) the n-th term of the input and output series
        is the n-th derivative; if False, the plain Taylor coefficient (divided by n!).

    Returns:
      ``(primals_out, series_out)``: ``fun(*primals)`` and its series, with the structure of
      ``fun``'s output.
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different "
                         "arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    if factorial_scaled:
        series = [[term / fact(k + 1) for k, term in enumerate(terms)] for terms in series]
    else:
        series = [list(terms) for terms in series]
    out_primals, out_terms, out_tree = jet_flat(fun, order, list(primals), series)
    if factorial_scaled:
        out_terms = [[term * fact(k + 1) for k, term in enumerate(terms)]
                     for terms in out_terms]
    return (tree_util.tree_unflatten(out_tree, out_primals),
            tree_util.tree_unflatten(out_tree, out_terms))


jet2 = partial(jet, factorial_scaled=False)


# -- rule constructors (JAX's names) --------------------------------------------------------

def defzero(prim):
    """``prim``'s outputs do not move (comparisons, rounding, bit operations...)."""
    jet_rules[prim] = partial(zero_prop, prim)


def zero_prop(prim, primals_in, series_in, **params):
    return prim.bind(*primals_in, **params), zero_series


def deflinear(prim):
    """``prim`` is linear: each term goes through it on its own."""
    jet_rules[prim] = partial(linear_prop, prim)


def linear_prop(prim, primals_in, series_in, **params):
    primal_out = prim.bind(*primals_in, **params)
    series_out = [prim.bind(*terms_in, **params) for terms_in in zip(*series_in)]
    if prim.multiple_results:
        series_out = list(zip(*series_out))
    return primal_out, series_out


def def_deriv(prim, deriv):
    """The rule of a unary ``prim`` from its first derivative ``deriv``."""
    jet_rules[prim] = partial(deriv_prop, prim, deriv)


def deriv_prop(prim, deriv, primals_in, series_in):
    x, = primals_in
    series, = series_in
    primal_out = prim.bind(x)
    c0, cs = jet2(deriv, primals_in, series_in)
    return chain_series([c0] + cs, [x] + series, primal_out)


def chain_series(c, u, primal_out):
    """The series of ``v`` where ``v' = c u'``, given the series ``c`` and ``u`` and ``v``'s
    primal: ``v_k = sum_{j=1..k} j c_{k-j} u_j / k`` (``c`` may be the list of ``v`` itself,
    filled as it goes: exp). Returns ``(primal_out, series_out)``."""
    v = [primal_out] + [None] * (len(u) - 1)
    c = v if c is None else c
    for k in range(1, len(v)):
        v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
    primal_out, *series_out = v
    return primal_out, series_out


def def_comp(prim, comp, **kwargs):
    """The rule of ``prim`` as the jet of ``comp``, a composition of simpler operations."""
    jet_rules[prim] = partial(jet2, comp, **kwargs)


__all__ = ["jet", "jet2", "fact", "jet_flat", "jet_rules", "JetTrace", "JetTracer",
           "ZeroTerm", "ZeroSeries", "zero_term", "zero_series", "defzero", "zero_prop",
           "deflinear", "linear_prop", "def_deriv", "deriv_prop", "def_comp", "chain_series"]
