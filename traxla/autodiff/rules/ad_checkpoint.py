"""Differentiating ``remat2`` (``checkpoint``) and ``name``, as JAX 0.10.2 does.

- JVP: the body's JVP jaxpr, still one ``remat2`` equation.
- Linearize (JAX's ``remat_partial_eval``): the body is linearized once into its known
  equations (run now) and its linear ones. The policy is asked about every known
  equation: the outputs of a saveable one are residuals, any other one is recomputed in
  the backward pass. The known equations that the primal outputs and the residuals
  need are evaluated inline in the enclosing trace (each residual that another known
  equation also reads passes through ``reduce_precision``, so forward and backward see
  the same bits, as JAX does); the recomputation and the linear equations, in the order
  JAX's JVP jaxpr has them, form a ``remat2[differentiated=True]`` equation of the
  residuals, the primal inputs it reads and the tangents.
- Transpose: a ``remat2`` of the transposed body (recomputation first, then the
  backward pass), returning only the nonzero cotangents.
- ``name``: the tangent passes through unnamed.
"""
from __future__ import annotations

from traxla.ir.effects import eqn_effects

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var
from traxla.ir.rules.ad_checkpoint import name_p, remat_p
from traxla.ir.rules.optimization import reduce_precision_p
from traxla.tracer import DynamicJaxprTrace, DynamicJaxprTracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import set_current_trace, source_info_context
from traxla.autodiff.ad import (JVPTrace, JVPTracer, Zero, backward_pass, is_undefined, jvp_rules,
                   linearize_rules, tangent_aval, transpose_rules, zero_of)
from traxla.autodiff.rules._util import jvp_of_nonzero, split_jvp_outputs
from traxla.autodiff.remat_policies import Offloadable, SaveableType, ensure_enum, nothing_saveable
from traxla.autodiff.rules.control_flow import _dce_jaxpr, _dce_rules
from traxla.ir.config import config


def eval_with_source(jaxpr: Jaxpr, consts, args):
    """``eval_jaxpr`` keeping each equation's source info (residuals are reported from
    the line that computed them)."""
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))

    def read(x):
        return x if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        with source_info_context(eqn.source_info):
            out = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return [read(v) for v in jaxpr.outvars]


def _open(closed: ClosedJaxpr):
    """A closed jaxpr as remat2 carries it: consts become leading operands."""
    j = closed.jaxpr
    return Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.debug_info), \
        list(closed.consts)


def _cse_flags(prevent_cse, n_before, n_after=0, before=False, after=True):
    if isinstance(prevent_cse, bool):
        return prevent_cse
    return (before,) * n_before + tuple(prevent_cse) + (after,) * n_after


# -- JVP -----------------------------------------------------------------------------------

def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    fun, out_zero = jvp_of_nonzero(lambda *a: eval_with_source(jaxpr, (), a), tangents)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    avals = [lax.aval_of(p) for p in primals] + [lax.aval_of(t) for t in nz_tangents]
    new, consts = _open(trace_to_jaxpr(fun, avals, make_debug_info(fun, "jvp", ())))
    if not isinstance(prevent_cse, bool):
        prevent_cse = (False,) * len(consts) + tuple(prevent_cse) + (True,) * len(nz_tangents)
    outs = remat_p.bind(*consts, *primals, *nz_tangents, jaxpr=new, prevent_cse=prevent_cse,
                        differentiated=differentiated, policy=policy)
    return split_jvp_outputs(outs, len(jaxpr.outvars), out_zero)


# -- linearize: partial evaluation under the policy ------------------------------------------

class _StampedTrace(DynamicJaxprTrace):
    """The linear jaxpr's trace, noting for each equation how many known equations came
    before it (to interleave the two as JAX's JVP jaxpr has them)."""

    def __init__(self, debug_info, known_trace):
        super().__init__(debug_info)
        self.known_trace = known_trace
        self.stamps: list = []

    def process_primitive(self, prim, args, params):
        n_eqns = len(self.eqns)
        out = super().process_primitive(prim, args, params)
        if len(self.eqns) > n_eqns:  # (a forwarded equation, say an identity broadcast, is not)
            self.stamps.append(len(self.known_trace.eqns))
        return out


class _Split:
    """The work of one linearization of a remat body, reusable across calls."""

    __slots__ = ("known", "rounded", "staged", "staged_consts", "used_primals", "used_tangents",
                 "num_res", "zero_outs")


def _saveable(eqn, policy) -> bool:
    case = ensure_enum(policy(eqn.primitive, *[x.aval for x in eqn.invars], **eqn.params))
    if isinstance(case, Offloadable):
        raise NotImplementedError(
            f"checkpoint policy asked to offload the output of '{eqn.primitive.name}' to "
            f"{case.dst} memory: traxla has no host memory space to offload residuals to on "
            "this backend; use a policy that saves or recomputes instead.")
    return isinstance(case, SaveableType)


def _split_remat(jaxpr: Jaxpr, nonzero, primal_avals, policy) -> _Split:
    known_trace = DynamicJaxprTrace(make_debug_info(_split_remat, "checkpoint", ()))
    tangent_trace = _StampedTrace(make_debug_info(_split_remat, "checkpoint", ()), known_trace)
    primals = [known_trace.new_arg(a) for a in primal_avals]
    nonzero = [nz and tangent_aval(a).dtype != dtypes.float0 for a, nz in zip(primal_avals, nonzero)]
    tangents = [tangent_trace.new_arg(tangent_aval(a)) if nz else zero_of(p)
                for p, a, nz in zip(primals, primal_avals, nonzero)]
    jvp_trace = JVPTrace(known_trace, tangent_trace)
    try:
        with set_current_trace(jvp_trace):
            outs = eval_with_source(jaxpr, (), [JVPTracer(jvp_trace, p, t)
                                                for p, t in zip(primals, tangents)])
        pts = [jvp_trace.to_pt(o) for o in outs]
    finally:
        jvp_trace.invalidate()
    primal_outs = [p for p, _ in pts]
    zero_outs = [type(t) is Zero for _, t in pts]
    try:
        known = known_trace.to_closed_jaxpr(primal_outs)
        lin = tangent_trace.to_closed_jaxpr([t for _, t in pts if type(t) is not Zero])
    finally:
        known_trace.invalidate()
        tangent_trace.invalidate()
    kj, lj = known.jaxpr, lin.jaxpr
    if kj.constvars:  # concrete constants of the known side: explicit, like literals
        kj = Jaxpr([], kj.constvars + kj.invars, kj.outvars, kj.eqns, kj.debug_info)
    known_consts = list(known.consts)
    # each linear constvar is a known variable (a tracer of the known trace) or a constant
    lin_source = {}
    lin_consts = {}
    for v, c in zip(lj.constvars, lin.consts):
        if type(c) is DynamicJaxprTracer and c._trace is known_trace:
            lin_source[v] = c._var
        else:
            lin_consts[v] = c
    known_invars = set(kj.invars)
    saveable = {}  # known variable -> whether the policy lets it be saved
    recompute_ids = set()
    for eqn in kj.eqns:
        ok = _saveable(eqn, policy)
        saveable.update((v, ok) for v in eqn.outvars)
        if not ok:
            recompute_ids.add(id(eqn))
    # the staged equations in JVP order: known recomputations interleaved with linear ones
    position = {id(e): i for i, e in enumerate(kj.eqns)}
    staged, stamps = [], tangent_trace.stamps
    li = 0
    for e in kj.eqns + [None]:
        k = len(kj.eqns) if e is None else position[id(e)]
        while li < len(lj.eqns) and stamps[li] <= k:
            staged.append(("lin", lj.eqns[li]))
            li += 1
        if e is not None and id(e) in recompute_ids:
            staged.append(("known", e))
    # residuals in order of first use by a staged equation (before DCE, as JAX)
    residuals: dict = {}

    def known_var(kind, x):
        if type(x) is Literal:
            return None
        if kind == "lin":
            return lin_source.get(x)
        return x

    for kind, e in staged:
        for x in e.invars:
            v = known_var(kind, x)
            if v is not None and v not in known_invars and saveable.get(v, False):
                residuals.setdefault(v, None)
    # DCE of the staged equations from the linear outputs
    needed = {x for x in lj.outvars if type(x) is not Literal}
    needed_known = {known_var("lin", x) for x in needed} - {None}
    kept = []
    for kind, e in reversed(staged):
        if kind == "lin":
            if not any(v in needed for v in e.outvars):
                continue
            for x in e.invars:
                v = known_var(kind, x)
                if v is not None:
                    needed_known.add(v)
                elif type(x) is not Literal:
                    needed.add(x)
        else:
            used_outs = [v in needed_known for v in e.outvars]
            if not any(used_outs) and not eqn_effects(e):  # effects rerun, as in JAX
                continue
            rule = _dce_rules.get(e.primitive)
            if rule is not None and not all(used_outs):  # recompute only what is used
                used_ins, e = rule(used_outs, e)
            e = _with_fresh_subjaxprs(e)
            needed_known.update(x for x in e.invars if type(x) is not Literal)
        kept.append((kind, e))
    kept.reverse()
    res_vars = [v for v in residuals if v in needed_known]
    used_primals = [i for i, v in enumerate(kj.invars[len(known_consts):]) if v in needed_known]
    tangent_vars = list(lj.invars)
    used_tangents = [j for j, v in enumerate(tangent_vars) if v in needed]
    # the differentiated remat body, retraced so that it has variables of its own
    primal_vars = kj.invars[len(known_consts):]

    def staged_fun(*args):
        it = iter(args)
        env = {}
        for v in res_vars:
            env[v] = next(it)
        for i in used_primals:
            env[primal_vars[i]] = next(it)
        lenv = {}
        for j in used_tangents:
            lenv[tangent_vars[j]] = next(it)
        for v, c in zip(kj.invars[:len(known_consts)], known_consts):
            env[v] = c
        for v, c in lin_consts.items():
            lenv[v] = c

        def read(kind, x):
            if type(x) is Literal:
                return x
            v = known_var(kind, x)
            if v is not None:
                return env[v]
            return lenv[x] if kind == "lin" else env[x]

        for kind, e in kept:
            with source_info_context(e.source_info):
                out = e.primitive.bind(*[read(kind, x) for x in e.invars], **e.params)
            (lenv if kind == "lin" else env).update(
                zip(e.outvars, out if e.primitive.multiple_results else [out]))
        return [read("lin", x) for x in lj.outvars]

    avals = ([v.aval for v in res_vars] + [primal_avals[i] for i in used_primals]
             + [tangent_vars[j].aval for j in used_tangents])
    staged_closed = trace_to_jaxpr(staged_fun, avals, make_debug_info(staged_fun, "checkpoint", ()))
    split = _Split()
    split.staged, split.staged_consts = _open(staged_closed)
    # the known jaxpr: primal outputs and residuals, DCE'd
    known_jaxpr = Jaxpr([], kj.invars, list(kj.outvars) + res_vars, kj.eqns, kj.debug_info)
    known_jaxpr, _ = _dce_jaxpr(known_jaxpr, [True] * len(known_jaxpr.outvars),
                                [True] * len(kj.invars))
    read_by_known = {x for e in known_jaxpr.eqns for x in e.invars if type(x) is not Literal}
    split.rounded = {v for v in res_vars if v in read_by_known and dtypes.is_inexact(v.aval.dtype)}
    split.known = (known_jaxpr, known_consts)
    split.used_primals, split.used_tangents = used_primals, used_tangents
    split.num_res, split.zero_outs = len(res_vars), zero_outs
    return split


def _fresh(jaxpr: Jaxpr) -> Jaxpr:
    """A copy of ``jaxpr`` with variables of its own (so that it prints with its own names,
    as JAX's partial evaluation rebuilds the jaxprs it splits)."""
    subst = {}

    def new(v):
        if type(v) is Literal:
            return v
        if v not in subst:
            subst[v] = Var(v.aval)
        return subst[v]

    constvars, invars = [new(v) for v in jaxpr.constvars], [new(v) for v in jaxpr.invars]
    eqns = [e.replace(invars=[new(x) for x in e.invars], outvars=[new(v) for v in e.outvars])
            for e in jaxpr.eqns]
    return Jaxpr(constvars, invars, [new(v) for v in jaxpr.outvars], eqns, jaxpr.debug_info)


def _with_fresh_subjaxprs(eqn):
    params = {k: (ClosedJaxpr(_fresh(v.jaxpr), v.consts) if isinstance(v, ClosedJaxpr) else v)
              for k, v in eqn.params.items()}
    return eqn.replace(params=params)


def _eval_known(jaxpr: Jaxpr, consts, args, rounded):
    """Evaluates the known equations; a residual that other known equations read is rounded
    (``reduce_precision``) where it is produced, and the rounded value is used after."""
    env = dict(zip(jaxpr.invars, list(consts) + list(args)))

    def read(x):
        return x if type(x) is Literal else env[x]

    for eqn in jaxpr.eqns:
        with source_info_context(eqn.source_info):
            out = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, o in zip(eqn.outvars, outs):
                if v in rounded and not (eqn.primitive is reduce_precision_p):
                    fi = dtypes.finfo(v.aval.dtype)
                    o = reduce_precision_p.bind(o, exponent_bits=fi.nexp, mantissa_bits=fi.nmant)
                env[v] = o
    return [read(v) for v in jaxpr.outvars]


_split_cache: dict = {}
_CACHE_LIMIT = 1024


def _remat_linearize(trace, primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzero = tuple(type(t) is not Zero for t in tangents)
    primal_avals = tuple(lax.aval_of(p) for p in primals)
    key = (id(jaxpr), nonzero, primal_avals, policy, config.enable_x64)
    hit = _split_cache.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, _split_remat(jaxpr, list(nonzero), list(primal_avals),
                                   policy or nothing_saveable))
        if len(_split_cache) >= _CACHE_LIMIT:
            _split_cache.clear()
        _split_cache[key] = hit
    split = hit[1]
    known_jaxpr, known_consts = split.known
    with set_current_trace(trace.parent):
        known_outs = _eval_known(known_jaxpr, known_consts, primals, split.rounded)
    m = len(jaxpr.outvars)
    primal_outs, residuals = known_outs[:m], known_outs[m:]
    touts = []
    if split.staged.outvars:
        nz_tangents = [t for t in tangents if type(t) is not Zero]
        operands = (list(split.staged_consts) + residuals
                    + [primals[i] for i in split.used_primals]
                    + [nz_tangents[j] for j in split.used_tangents])
        if not isinstance(prevent_cse, bool):  # as the JVP then JAX's partial eval set them
            prevent_cse = ((False,) * len(split.staged_consts) + (True,) * len(residuals)
                           + tuple(prevent_cse[i] for i in split.used_primals)
                           + (True,) * len(split.used_tangents))
        with set_current_trace(trace.tangent_trace):
            touts = remat_p.bind(*operands, jaxpr=split.staged, prevent_cse=prevent_cse,
                                 differentiated=True, policy=policy)
    touts = iter(touts)
    tangent_outs = [zero_of(p) if z else next(touts) for p, z in zip(primal_outs, split.zero_outs)]
    return primal_outs, tangent_outs


# -- transpose -------------------------------------------------------------------------------

_transpose_cache: dict = {}


def _transposed_body(jaxpr: Jaxpr, linear, ct_avals, out_zeros):
    res_vars = [v for v, lin in zip(jaxpr.invars, linear) if not lin]
    lin_vars = [v for v, lin in zip(jaxpr.invars, linear) if lin]
    in_zeros = []

    def transposed(*xs):
        res, cts = xs[:len(res_vars)], iter(xs[len(res_vars):])
        view = ClosedJaxpr(Jaxpr(res_vars, lin_vars, jaxpr.outvars, jaxpr.eqns), list(res))
        out_cts = [Zero(tangent_aval(v.aval)) if z else next(cts)
                   for v, z in zip(jaxpr.outvars, out_zeros)]
        in_cts = backward_pass(view, out_cts)
        in_zeros.extend(type(c) is Zero for c in in_cts)
        return [c for c in in_cts if type(c) is not Zero]

    avals = [v.aval for v in res_vars] + list(ct_avals)
    closed = trace_to_jaxpr(transposed, avals, make_debug_info(transposed, "transpose", ()))
    return _open(closed), in_zeros


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    linear = tuple(is_undefined(a) for a in args)
    out_zeros = tuple(type(c) is Zero for c in cts)
    if all(out_zeros):
        return [Zero(a.aval) if is_undefined(a) else None for a in args]
    nz_cts = [c for c in cts if type(c) is not Zero]
    ct_avals = tuple(lax.aval_of(c) for c in nz_cts)
    key = (id(jaxpr), linear, out_zeros, ct_avals, config.enable_x64)
    hit = _transpose_cache.get(key)
    if hit is None or hit[0] is not jaxpr:
        hit = (jaxpr, _transposed_body(jaxpr, linear, ct_avals, out_zeros))
        if len(_transpose_cache) >= _CACHE_LIMIT:
            _transpose_cache.clear()
        _transpose_cache[key] = hit
    (body, consts), in_zeros = hit[1]
    residuals = [a for a in args if not is_undefined(a)]
    if not isinstance(prevent_cse, bool):
        prevent_cse = ((False,) * len(consts)
                       + tuple(f for f, lin in zip(prevent_cse, linear) if not lin)
                       + (True,) * len(nz_cts))
    outs = iter(remat_p.bind(*consts, *residuals, *nz_cts, jaxpr=body, prevent_cse=prevent_cse,
                             differentiated=differentiated, policy=policy))
    zeros = iter(in_zeros)
    result = []
    for a in args:
        if not is_undefined(a):
            result.append(None)
        elif next(zeros):
            result.append(Zero(a.aval))
        else:
            result.append(next(outs))
    return result


# -- DCE (JAX's remat_dce) ----------------------------------------------------------------------

def _remat_dce(used_outputs, eqn):
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    inner = eqn.params["jaxpr"]
    new, used_inputs = _dce_jaxpr(inner, used_outputs, [False] * len(inner.invars))
    prevent_cse = eqn.params["prevent_cse"]
    if not isinstance(prevent_cse, bool):
        prevent_cse = tuple(p for p, u in zip(prevent_cse, used_inputs) if u)
    return used_inputs, eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(eqn.params, jaxpr=new, prevent_cse=prevent_cse))


def _name_jvp(primals, tangents, *, name):
    return name_p.bind(primals[0], name=name), tangents[0]


jvp_rules[remat_p] = _remat_jvp
linearize_rules[remat_p] = _remat_linearize
transpose_rules[remat_p] = _remat_transpose
_dce_rules[remat_p] = _remat_dce
jvp_rules[name_p] = _name_jvp
