"""Differentiating ``jit`` (and JAX's ``call`` / ``closed_call``, by the same rules): the
called jaxpr is differentiated and stays one ``jit`` equation. Under linearize it splits
into a known ``jit`` (primal outputs and residuals, computed now) and a linear ``jit``
(residuals and tangents), whose transpose is again a ``jit`` of the transposed jaxpr."""
from __future__ import annotations

from traxla import lax
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal
from traxla.ir.rules.call import call_p, closed_call_p, jit_p
from traxla.tracer.call_primitives import bind_call_jaxpr
from traxla.tracer import (DynamicJaxprTrace, DynamicJaxprTracer, Tracer, make_debug_info,
                       trace_to_jaxpr)
from traxla.runtime.cache import on_clear
from traxla.tracer.traces import set_current_trace
from traxla.tracer.interpret import eval_jaxpr
from traxla.autodiff.partial_eval import bind_known_apart
from traxla.autodiff.custom import custom_jvp_call_p
from traxla.autodiff.ad import (Zero, backward_pass, instantiate, is_undefined, jvp_rules,
                   linearize_flat, linearize_rules, mixed_rules, tangent_aval, transpose_rules, zero_of,
                   zeros_like_aval)
from traxla.autodiff.rules._util import jvp_of_nonzero, split_jvp_outputs
from traxla.autodiff.rules.control_flow import dce_closed, _dce_consts
from traxla.ir.config import config


def _bind(prim, args, jaxpr: ClosedJaxpr, name):
    """Binds the call primitive ``prim`` (``jit``, or JAX's ``call`` / ``closed_call``,
    whose rules are jit's) on ``args`` calling ``jaxpr``."""
    if prim is jit_p:
        return jit_p.bind(*args, jaxpr=jaxpr, name=name)
    return bind_call_jaxpr(prim, args, jaxpr)


def for_call_primitive(rule, prim):
    """One of jit's rules as the rule of ``prim`` (``call``, ``closed_call``), whose
    equations carry their jaxpr as ``call_jaxpr``."""
    def adapted(*args, call_jaxpr, **params):
        del params
        closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
        return rule(*args, jaxpr=closed, name=prim.name, prim=prim)
    return adapted


def _dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """JAX dead-code-eliminates the known jaxpr of a linearized jit, into the branches and
    bodies of its control flow (with every output and input kept)."""
    n_in = len(closed.jaxpr.invars)
    return dce_closed(closed, [True] * len(closed.jaxpr.outvars), [True] * n_in)[0]


# As JAX caches ``linearize_jaxpr`` and the transpose of a jit's jaxpr, a jaxpr called
# twice is linearized / transposed once, so the jaxprs are shared (and print hoisted).
# Keys hold the jaxpr itself (not only its id) so that an id is never reused while cached.
_linearize_cache: dict = {}
_jvp_cache: dict = {}
_transpose_cache: dict = {}
_CACHE_LIMIT = 4096


on_clear(_linearize_cache.clear)
on_clear(_jvp_cache.clear)
on_clear(_transpose_cache.clear)


def _remember(cache, key, value):
    if len(cache) >= _CACHE_LIMIT:  # bounded: drop everything rather than grow forever
        cache.clear()
    cache[key] = value


def _jit_jvp(primals, tangents, *, jaxpr, name, prim=jit_p):
    avals = [lax.aval_of(p) for p in primals] + [tangent_aval(lax.aval_of(p))
                                                 for p, t in zip(primals, tangents)
                                                 if type(t) is not Zero]
    # as JAX caches ``jvp_jaxpr``: a jit called twice differentiates to one shared jaxpr
    key = (id(jaxpr), tuple(type(t) is not Zero for t in tangents), tuple(avals),
           config.enable_x64)
    hit = _jvp_cache.get(key)
    if hit is None or hit[0] is not jaxpr:
        fun, out_zero = jvp_of_nonzero(lambda *a: eval_jaxpr(jaxpr, (), *a), tangents)
        hit = (jaxpr, trace_to_jaxpr(fun, avals, make_debug_info(fun, "jvp", ())), out_zero)
        if not any(isinstance(c, Tracer) for c in jaxpr.consts):
            _remember(_jvp_cache, key, hit)
    _, new, out_zero = hit
    outs = _bind(prim, [*primals, *[t for t in tangents if type(t) is not Zero]], new, name)
    return split_jvp_outputs(outs, len(jaxpr.out_avals), out_zero)


def _linearize_jit_jaxpr(jaxpr, nonzero, primal_avals):
    """The known jaxpr (primal outputs, then residuals), the linear jaxpr (residuals,
    nonzero tangents -> nonzero output tangents), where each residual comes from
    (``("out", i)``: the known jaxpr's i-th residual output; ``("in", j)``: the jit's j-th
    operand) and which output tangents are zero."""
    holder = {}

    def known(*args):
        outs, lin = linearize_flat(lambda *a: eval_jaxpr(jaxpr, (), *a), list(args), "linearize",
                                   nonzero)
        # as JAX's auto-DCE'd tangent trace: a residual only dead tangent code reads (the
        # tangent of a stop_gradient'd max) is not one, nor is the primal work computing it
        lin.jaxpr = _dce_consts(lin.jaxpr)
        consts = lin.jaxpr.consts
        res_index = [i for i, c in enumerate(consts)
                     if isinstance(c, DynamicJaxprTracer) and not any(c is a for a in args)]
        # where each residual comes from, worked out here while this trace's tracers are
        # alive: what outlives the trace holds no tracer of it (leak checking looks)
        out_position = {i: k for k, i in enumerate(res_index)}
        sources, res_vars, kept_consts, kept_vars = [], [], [], []
        lj = lin.jaxpr.jaxpr
        for i, (var, c) in enumerate(zip(lj.constvars, consts)):
            if i in out_position:
                sources.append(("out", out_position[i])); res_vars.append(var)
            elif isinstance(c, DynamicJaxprTracer):  # one of the known jit's own inputs
                sources.append(("in", next(j for j, a in enumerate(args) if a is c)))
                res_vars.append(var)
            else:
                kept_consts.append(c); kept_vars.append(var)
        holder.update(lj=lj, sources=sources, res_vars=res_vars, kept_consts=kept_consts,
                      kept_vars=kept_vars, zero_outs=lin.zero_outs)
        return list(outs) + [consts[i] for i in res_index]

    known_jaxpr = _dce(trace_to_jaxpr(known, primal_avals, make_debug_info(known, "linearize", ())))
    lj = holder["lj"]
    linear = ClosedJaxpr(Jaxpr(holder["kept_vars"], holder["res_vars"] + lj.invars, lj.outvars,
                               lj.eqns), holder["kept_consts"])
    return known_jaxpr, linear, holder["sources"], holder["zero_outs"]


def _jit_linearize(trace, primals, tangents, *, jaxpr, name, prim=jit_p):
    nonzero = tuple(type(t) is not Zero for t in tangents)
    primal_avals = [lax.aval_of(p) for p in primals]
    key = (id(jaxpr), nonzero, tuple(primal_avals), config.enable_x64)
    hit = _linearize_cache.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, _linearize_jit_jaxpr(jaxpr, list(nonzero), primal_avals))
        if not any(isinstance(c, Tracer) for c in jaxpr.consts):
            _remember(_linearize_cache, key, hit)
    known_jaxpr, linear, sources, zero_outs = hit[1]
    with set_current_trace(trace.parent):
        known_outs = _bind(prim, primals, known_jaxpr, name)
    m = len(jaxpr.out_avals)
    primal_outs, res_outs = known_outs[:m], known_outs[m:]
    res_values = [res_outs[i] if kind == "out" else primals[i] for kind, i in sources]
    touts = []
    if linear.jaxpr.outvars:  # every output tangent is zero: nothing linear to record
        with set_current_trace(trace.tangent_trace):
            touts = _bind(prim, [*res_values, *[t for t in tangents if type(t) is not Zero]],
                          linear, name)
    touts = iter(touts)
    tangent_outs = [zero_of(p) if z else next(touts) for p, z in zip(primal_outs, zero_outs)]
    return primal_outs, tangent_outs


def _transpose_body(jaxpr, linear, res, cts):
    """The cotangents of a call's linear operands (``linear`` marks them; ``res`` are the
    others' values), its body ``jaxpr`` transposed in the current trace."""
    inner = jaxpr.jaxpr
    res_vars = [v for v, lin in zip(inner.invars, linear) if not lin]
    lin_vars = [v for v, lin in zip(inner.invars, linear) if lin]
    view = ClosedJaxpr(Jaxpr(list(inner.constvars) + res_vars, lin_vars, inner.outvars,
                             inner.eqns), list(jaxpr.consts) + list(res))
    in_cts = backward_pass(view, list(cts))
    return [zeros_like_aval(v.aval) if type(c) is Zero else c for c, v in zip(in_cts, lin_vars)]


def _jit_transpose(cts, *args, jaxpr, name, prim=jit_p):
    linear = [is_undefined(a) for a in args]
    if all(type(c) is Zero for c in cts):
        return [Zero(a.aval) if is_undefined(a) else None for a in args]
    residuals = [a for a in args if not is_undefined(a)]
    ct_avals = [c.aval if type(c) is Zero else lax.aval_of(c) for c in cts]

    def transposed(*xs):
        return _transpose_body(jaxpr, linear, xs[:len(residuals)], xs[len(residuals):])

    avals = [lax.aval_of(r) for r in residuals] + ct_avals
    key = (id(jaxpr), tuple(linear), tuple(avals), config.enable_x64)
    hit = _transpose_cache.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, trace_to_jaxpr(transposed, avals,
                                     make_debug_info(transposed, "transpose", ())))
        if not any(isinstance(c, Tracer) for c in jaxpr.consts):
            _remember(_transpose_cache, key, hit)
    t_jaxpr = hit[1]
    outs = iter(_bind(prim, [*residuals, *[instantiate(c) for c in cts]], t_jaxpr, name))
    return [next(outs) if lin else None for lin in linear]


def _jit_mixed(parent, tangent_trace, unknown, *args, jaxpr, name, prim=jit_p):
    """A jit of primal and tangent operands inside a linearized rule (a custom_jvp rule that
    is itself jitted): JAX's partial evaluation of the call. Equations of primal values only
    form a known jit, bound now; the rest a jit in the tangent trace, reading the known
    values it needs (residuals) as leading operands."""
    j = jaxpr.jaxpr
    known_trace, unknown_trace = DynamicJaxprTrace(j.debug_info), DynamicJaxprTrace(j.debug_info)
    env, known = dict(zip(j.constvars, jaxpr.consts)), set(j.constvars)
    known_args = [a for a, uk in zip(args, unknown) if not uk]
    known_binders = []
    for v, uk in zip(j.invars, unknown):
        env[v] = (unknown_trace if uk else known_trace).new_arg(v.aval)
        if not uk:
            known.add(v)
            known_binders.append(env[v])

    def read(x):
        return x if isinstance(x, Literal) else env[x]

    def is_known(x):
        return isinstance(x, Literal) or x in known

    try:
        bind_known_apart(j.eqns, env, known, known_trace, unknown_trace)
        out_known = [is_known(v) for v in j.outvars]
        u_closed = unknown_trace.to_closed_jaxpr(
            [read(v) for v, k in zip(j.outvars, out_known) if not k])
        uj = u_closed.jaxpr
        is_res = [isinstance(c, DynamicJaxprTracer) and c._trace is known_trace
                  for c in u_closed.consts]
        residuals = [c for c, r in zip(u_closed.consts, is_res) if r]
        # a residual that is a known operand is passed on, not returned (JAX's forwarding)
        res_fwd = [next((i for i, b in enumerate(known_binders) if b is r), None)
                   for r in residuals]
        k_closed = _dce(known_trace.to_closed_jaxpr(
            [read(v) for v, k in zip(j.outvars, out_known) if k]
            + [r for r, f in zip(residuals, res_fwd) if f is None]))
    finally:
        known_trace.invalidate()
        unknown_trace.invalidate()
    u_closed = ClosedJaxpr(
        Jaxpr([v for v, r in zip(uj.constvars, is_res) if not r],
              [v for v, r in zip(uj.constvars, is_res) if r] + uj.invars, uj.outvars, uj.eqns,
              uj.debug_info),
        [c for c, r in zip(u_closed.consts, is_res) if not r])
    n_known = sum(out_known)
    with set_current_trace(parent):
        known_outs = _bind(prim, known_args, k_closed, name)
    computed = iter(known_outs[n_known:])
    res_values = [next(computed) if f is None else known_args[f] for f in res_fwd]
    with set_current_trace(tangent_trace):
        unknown_outs = iter(_bind(prim, [*res_values,
                                         *[a for a, uk in zip(args, unknown) if uk]],
                                  u_closed, name))
    known_it = iter(known_outs[:n_known])
    return [next(known_it) if k else next(unknown_outs) for k in out_known]


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, **_):
    """A custom_jvp function in linear code (JAX inlines it there when partially evaluating:
    a linear function keeps no custom rule): its body transposed in place."""
    linear = [is_undefined(a) for a in args]
    outs = iter(_transpose_body(call_jaxpr, linear, [a for a in args if not is_undefined(a)],
                                cts))
    return [next(outs) if lin else None for lin in linear]


transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose
jvp_rules[jit_p] = _jit_jvp
mixed_rules[jit_p] = _jit_mixed
linearize_rules[jit_p] = _jit_linearize
transpose_rules[jit_p] = _jit_transpose
for _p in (call_p, closed_call_p):
    jvp_rules[_p] = for_call_primitive(_jit_jvp, _p)
    mixed_rules[_p] = for_call_primitive(_jit_mixed, _p)
    linearize_rules[_p] = for_call_primitive(_jit_linearize, _p)
    transpose_rules[_p] = for_call_primitive(_jit_transpose, _p)
del _p
