"""Differentiating control flow: ``cond``, ``scan`` and ``while`` as jaxpr rewrites,
following JAX 0.10.2's rules so that the differentiated jaxprs print the same.

- ``cond``: the JVP differentiates every branch with the same nonzero-tangent
  pattern (an output's tangent is nonzero if it is in any branch). Under
  linearize a known ``cond`` computes the primal outputs and the residuals of
  whichever branch runs (residuals of all branches are merged by type, so every
  branch returns the same types, zeros filling the slots it does not use), and a
  linear ``cond`` maps residuals and tangents to output tangents. Its transpose
  is a ``cond`` of the transposed branches (the index is never linear).
- ``scan``: the JVP scans primals and tangents together, the carries' tangent
  pattern made consistent by a fixpoint. Under linearize a known scan produces
  the primal outputs plus the residuals (loop-invariant ones hoisted out of the
  loop, residuals that are just consts or xs forwarded), and a linear scan maps
  intensive residuals, tangents and stacked (extensive) residuals to tangents.
  Its transpose is a scan in the other direction over the transposed body, the
  consts' cotangents accumulated in the carry.
- ``while``: forward mode only. Under linearize the known ``while`` computes the
  primal outputs and the whole JVP ``while`` is staged into the linear jaxpr;
  transposing it raises JAX's error.
"""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal, Var
from traxla.ir.rules.ad import MemorySpace, empty2_p
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
from traxla.tracer import DynamicJaxprTrace, make_debug_info, trace_to_jaxpr
from traxla.tracer.traces import set_current_trace
from traxla.tracer.interpret import eval_jaxpr
from traxla.autodiff.partial_eval import (_cond_used_inputs, _dce, _dce_consts, _dce_jaxpr, _dce_rules,  # noqa: F401
                   _scan_dce_body, _split, bind_known_apart, dce_closed)
from traxla.autodiff.ad import (Zero, backward_pass, is_undefined, jvp_flat, jvp_rules, linearize_flat,
                   known_rules, linearize_rules, tangent_aval, transpose_rules, zero_of,
                   zeros_like_aval)
from traxla import lax


# -- helpers ---------------------------------------------------------------------------

def _zeros(aval):
    """JAX's ``zeros_like_aval``, which keeps the weak type (a weakly typed zero residual
    shares a residual slot with weakly typed ones, as in JAX)."""
    if aval.dtype == dtypes.float0 or dtypes.is_extended(aval.dtype):
        return zeros_like_aval(aval)
    zero = lax._convert_element_type(0, aval.dtype, aval.weak_type)
    return lax.broadcast(zero, aval.shape) if aval.shape else zero


def _instantiate(t):
    return _zeros(t.aval) if type(t) is Zero else t


def _nonzero(ts):
    return [t for t in ts if type(t) is not Zero]


def _retyped(jaxpr: Jaxpr, old_vars, avals) -> tuple:
    """``jaxpr`` with ``old_vars`` replaced by fresh variables of ``avals`` where the types
    differ (as JAX's cotangent accumulators, typed by the values they accumulate, which
    may differ from the binders in weak type); returns (jaxpr, the new variables)."""
    subst = {v: Var(a) for v, a in zip(old_vars, avals) if v.aval != a}
    if not subst:
        return jaxpr, list(old_vars)
    sub = lambda x: subst.get(x, x) if isinstance(x, Var) else x  # noqa: E731
    eqns = [e.replace(invars=[sub(x) for x in e.invars]) for e in jaxpr.eqns]
    new = Jaxpr(jaxpr.constvars, [sub(v) for v in jaxpr.invars], [sub(v) for v in jaxpr.outvars],
                eqns, jaxpr.debug_info)
    return new, [sub(v) for v in old_vars]


def _permute_binders(closed: ClosedJaxpr, in_order, out_order) -> ClosedJaxpr:
    """JAX's ``rearrange_binders``: the same jaxpr with its binders reordered."""
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [j.invars[i] for i in in_order],
                             [j.outvars[i] for i in out_order], j.eqns, j.debug_info),
                       closed.consts)


def _interleave_order(primal_counts, tangent_counts):
    """Indices taking ``[p1.., p2.., t1.., t2..]`` to ``[p1.., t1.., p2.., t2..]``."""
    order, p, t = [], 0, sum(primal_counts)
    for pc, tc in zip(primal_counts, tangent_counts):
        order += list(range(p, p + pc)) + list(range(t, t + tc))
        p, t = p + pc, t + tc
    return order


def _jvp_jaxpr(closed: ClosedJaxpr, nonzeros, inst):
    """JAX's ``ad.jvp_jaxpr``: a jaxpr taking ``[primals, nonzero tangents]`` and
    returning ``[primal outs, nonzero tangent outs]`` (zeros instantiated where
    ``inst``); also which tangent outputs are nonzero."""
    n = len(closed.in_avals)
    holder = {}

    def jvp(*args):
        ps, ts = args[:n], iter(args[n:])
        t_full = [next(ts) if nz else zero_of(p) for p, nz in zip(ps, nonzeros)]
        outs, touts = jvp_flat(lambda *a: eval_jaxpr(closed, (), *a), list(ps), t_full)
        touts = [_instantiate(t) if i and type(t) is Zero else t for t, i in zip(touts, inst)]
        holder["nz"] = [type(t) is not Zero for t in touts]
        return list(outs) + _nonzero(touts)

    avals = list(closed.in_avals) + [tangent_aval(a) for a, nz in zip(closed.in_avals, nonzeros)
                                     if nz]
    return trace_to_jaxpr(jvp, avals, make_debug_info(jvp, "jvp", ())), holder["nz"]


class _Linearized:
    """A jaxpr split by JAX's ``ad.linearize_jaxpr``. ``finalize(inst)`` gives ``primal``,
    mapping the primal inputs to the primal outputs and the residuals not forwarded
    from inputs (``fwds[i]``: the index into ``consts + inputs`` that residual ``i``
    is, else None), and ``tangent``, mapping ``[residuals, nonzero tangents]`` to the
    nonzero tangent outputs (zeros instantiated where ``inst``)."""

    def __init__(self, primal, fwds, res_avals, zero_outs, out_avals, lin_jaxpr, res_vars):
        self.primal = primal
        self.fwds = fwds
        self.res_avals = res_avals
        self.zero_outs = zero_outs
        self.out_avals = out_avals
        self._lin = lin_jaxpr
        self._res_vars = res_vars

    def nzs_out(self, inst=None):
        inst = inst or [False] * len(self.zero_outs)
        return [not z or i for z, i in zip(self.zero_outs, inst)]

    def finalize(self, inst=None):
        inst = inst or [False] * len(self.zero_outs)
        zero_outs, out_avals = self.zero_outs, self.out_avals
        # As JAX: a zero tangent instantiated under the linearize trace is computed on
        # the primal side (it has no tangent operand), so it becomes a residual that the
        # primal jaxpr returns and the tangent jaxpr forwards.
        inst_zero = [z and i for z, i in zip(zero_outs, inst)]
        primal, fwds, res_avals = self.primal, list(self.fwds), list(self.res_avals)
        nzero = sum(inst_zero)
        if nzero:
            old = primal

            def primal_aug(*args):
                return (list(eval_jaxpr(old, (), *args))
                        + [_zeros(a) for a, iz in zip(out_avals, inst_zero) if iz])

            primal = trace_to_jaxpr(primal_aug, list(old.in_avals),
                                    make_debug_info(primal_aug, "linearize", ()))
            fwds += [None] * nzero
            res_avals += primal.out_avals[len(primal.out_avals) - nzero:]
        zero_avals = res_avals[len(res_avals) - nzero:]
        lj, res_vars = self._lin, self._res_vars
        inner = Jaxpr(res_vars, lj.invars, lj.outvars, lj.eqns)
        nres = len(res_vars)

        def tangent(*args):
            outs = iter(eval_jaxpr(inner, args[:nres], *args[nres + nzero:]))
            zeros = iter(args[nres:nres + nzero])
            return [next(zeros) if iz else next(outs)
                    for z, i, iz in zip(zero_outs, inst, inst_zero) if i or not z]

        avals = [v.aval for v in res_vars] + list(zero_avals) + [v.aval for v in lj.invars]
        tangent = trace_to_jaxpr(tangent, avals, make_debug_info(tangent, "linearize", ()))
        return primal, fwds, res_avals, tangent


def _linearize_jaxpr(closed: ClosedJaxpr, nonzeros, allow_fwds=False) -> _Linearized:
    consts = list(closed.consts)
    n_in = len(closed.in_avals)
    allow = (list(allow_fwds) if isinstance(allow_fwds, (list, tuple))
             else [allow_fwds] * (len(consts) + n_in))
    holder = {}

    def known(*args):
        outs, lin = linearize_flat(lambda *a: eval_jaxpr(closed, (), *a), list(args),
                                   "linearize", list(nonzeros))
        lj0 = lin.jaxpr.jaxpr
        flat = Jaxpr([], list(lj0.constvars) + list(lj0.invars), lj0.outvars, lj0.eqns)
        nc = len(lj0.constvars)
        dced, used = _dce_jaxpr(flat, [True] * len(lj0.outvars),
                                [False] * nc + [True] * len(lj0.invars))
        res_index = [i for i in range(nc) if used[i]]
        lj = Jaxpr([lj0.constvars[i] for i in res_index], lj0.invars, dced.outvars, dced.eqns)
        res = [lin.jaxpr.consts[i] for i in res_index]
        fwd_inputs = consts + list(args)
        fwds = [next((k for k, (x, ok) in enumerate(zip(fwd_inputs, allow)) if ok and x is r),
                     None) for r in res]
        holder.update(lj=lj, res_vars=list(lj.constvars), fwds=fwds,
                      zero_outs=lin.zero_outs, out_avals=lin.out_avals)
        return list(outs) + [r for r, f in zip(res, fwds) if f is None]

    primal = _dce_consts(trace_to_jaxpr(known, list(closed.in_avals),
                                        make_debug_info(known, "linearize", ())))
    res_vars = holder["res_vars"]
    return _Linearized(primal, holder["fwds"], [v.aval for v in res_vars], holder["zero_outs"],
                       holder["out_avals"], holder["lj"], res_vars)


def _scan_params(**kw):
    n = kw.pop("n_operands")
    return dict(kw, linear=(False,) * n, _split_transpose=False)


# -- cond ----------------------------------------------------------------------------

def _cond_jvp(primals, tangents, *, branches, **params):
    index, *ops = primals
    nz = [type(t) is not Zero for t in tangents[1:]]
    n_out = len(branches[0].out_avals)
    first = [_jvp_jaxpr(b, nz, [False] * n_out) for b in branches]
    out_nz = [any(z) for z in zip(*[f[1] for f in first])]
    jvps = [j if z == out_nz else _jvp_jaxpr(b, nz, out_nz)[0]
            for b, (j, z) in zip(branches, first)]
    outs = cond_p.bind(index, *ops, *_nonzero(tangents[1:]), branches=tuple(jvps), **params)
    primal_outs, touts = outs[:n_out], iter(outs[n_out:])
    return primal_outs, [next(touts) if z else zero_of(p) for p, z in zip(primal_outs, out_nz)]


def _merge_branch_residuals(branch_res_avals):
    """JAX's ``_merge_branch_residuals``: residual slots shared across branches by type."""
    def enumerate_equal(xs):
        counts: dict = {}
        tagged = []
        for x in xs:
            tagged.append((x, counts.get(x, 0)))
            counts[x] = counts.get(x, 0) + 1
        return tagged
    tagged = [enumerate_equal(avals) for avals in branch_res_avals]
    all_tagged = list(dict.fromkeys(t for ts in tagged for t in ts))
    index = {t: i for i, t in enumerate(all_tagged)}
    return [a for a, _ in all_tagged], [[index[t] for t in ts] for ts in tagged]


def _empty_like(aval):
    """An unspecified value of ``aval`` (JAX's ``empty_like_aval``): ``empty2``, broadcast."""
    scalar = empty2_p.bind(dtype=aval.dtype, memory_space=MemorySpace.Device)
    return lax.broadcast(scalar, tuple(aval.shape)) if aval.shape else scalar


def _join_cond_outputs(primal: ClosedJaxpr, all_res, res_index, n_out) -> ClosedJaxpr:
    """A known branch returning every residual slot; slots it does not fill get ``empty2``
    padding (built for every slot, then overwritten by the branch's own, as JAX does)."""
    if not all_res:
        return primal

    def joined(*args):
        outs = eval_jaxpr(primal, (), *args)
        slots = [_empty_like(a) for a in all_res]
        for i, r in zip(res_index, outs[n_out:]):
            slots[i] = r
        return list(outs[:n_out]) + slots

    return trace_to_jaxpr(joined, list(primal.in_avals), make_debug_info(joined, "cond", ()))


def _join_cond_inputs(tangent: ClosedJaxpr, all_res, res_index) -> ClosedJaxpr:
    """A linear branch taking every residual slot, ignoring those it does not read."""
    j = tangent.jaxpr
    n = len(res_index)
    res_vars = [Var(a) for a in all_res]
    for i, v in zip(res_index, j.invars[:n]):
        res_vars[i] = v
    return ClosedJaxpr(Jaxpr(j.constvars, res_vars + j.invars[n:], j.outvars, j.eqns,
                             j.debug_info), tangent.consts)


def _cond_linearize(trace, primals, tangents, *, branches, **params):
    index, *ops = primals
    nz = [type(t) is not Zero for t in tangents[1:]]
    n_out = len(branches[0].out_avals)
    lins = [_linearize_jaxpr(b, nz) for b in branches]
    out_nz = [any(z) for z in zip(*[lin.nzs_out() for lin in lins])]
    parts = [lin.finalize(out_nz) for lin in lins]
    all_res, res_index = _merge_branch_residuals([p[2] for p in parts])
    known = tuple(_join_cond_outputs(p[0], all_res, idx, n_out)
                  for p, idx in zip(parts, res_index))
    with set_current_trace(trace.parent):
        outs = cond_p.bind(index, *ops, branches=known, **params)
    primal_outs, res = outs[:n_out], outs[n_out:]
    if not any(out_nz):
        return primal_outs, [zero_of(p) for p in primal_outs]
    linear = tuple(_join_cond_inputs(p[3], all_res, idx) for p, idx in zip(parts, res_index))
    with set_current_trace(trace.tangent_trace):
        touts = iter(cond_p.bind(index, *res, *_nonzero(tangents[1:]), branches=linear,
                                 **params))
    return primal_outs, [next(touts) if z else zero_of(p) for p, z in zip(primal_outs, out_nz)]


def _transpose_branch(branch: ClosedJaxpr, linear, lin_avals, ct_avals, res_avals, inst):
    """``[residuals, cts] -> cts of the linear operands`` (those in ``inst``, zeros
    instantiated); also which of them were nonzero."""
    j = branch.jaxpr
    res_vars = [v for v, lin in zip(j.invars, linear) if not lin]
    j, lin_vars = _retyped(j, [v for v, lin in zip(j.invars, linear) if lin], lin_avals)
    nres = len(res_vars)
    holder = {}

    def transposed(*args):
        res, cts = args[:nres], list(args[nres:])
        view = ClosedJaxpr(Jaxpr(list(j.constvars) + res_vars, lin_vars, j.outvars, j.eqns),
                           list(branch.consts) + list(res))
        in_cts = backward_pass(view, cts)
        holder["nz"] = [type(c) is not Zero for c in in_cts]
        return [_zeros(v.aval) if type(c) is Zero else c
                for c, v, i in zip(in_cts, lin_vars, inst) if i]

    closed = trace_to_jaxpr(transposed, list(res_avals) + list(ct_avals),
                            make_debug_info(transposed, "transpose", ()))
    return closed, holder["nz"]


def _cond_transpose(cts, index, *ops, branches, **params):
    zeros = [None] + [Zero(x.aval) if is_undefined(x) else None for x in ops]
    ct_nz = [type(c) is not Zero for c in cts]
    if not any(ct_nz):
        return zeros
    # JAX dead-code-eliminates the linear jaxpr before transposing it: outputs without
    # a cotangent are dropped, and with them the operands no branch then reads.
    used = _cond_used_inputs(branches, ct_nz)
    branches = [dce_closed(b, ct_nz, used)[0] for b in branches]
    kept = [x for x, u in zip(ops, used) if u]
    linear = [is_undefined(x) for x in kept]
    lin_avals = [x.aval for x in kept if is_undefined(x)]
    res = [x for x in kept if not is_undefined(x)]
    res_avals = [lax.aval_of(r) for r in res]
    cts_nz = _nonzero(cts)
    ct_avals = [lax.aval_of(c) for c in cts_nz]
    every = [True] * len(lin_avals)
    first = [_transpose_branch(b, linear, lin_avals, ct_avals, res_avals, every) for b in branches]
    out_nz = [any(z) for z in zip(*[f[1] for f in first])]
    if not any(out_nz):
        return zeros
    trans = tuple(j if out_nz == every else
                  _transpose_branch(b, linear, lin_avals, ct_avals, res_avals, out_nz)[0]
                  for b, (j, _) in zip(branches, first))
    outs = iter(cond_p.bind(index, *res, *cts_nz, branches=trans, **params))
    lin_cts = iter([next(outs) if nz else Zero(a) for nz, a in zip(out_nz, lin_avals)])
    kept_cts = iter([next(lin_cts) if lin else None for lin in linear])
    return [None] + [next(kept_cts) if u else z for u, z in zip(used, zeros[1:])]



jvp_rules[cond_p] = _cond_jvp
linearize_rules[cond_p] = _cond_linearize
transpose_rules[cond_p] = _cond_transpose


# -- scan ----------------------------------------------------------------------------

def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, unroll, num_consts, num_carry,
              linear=None, _split_transpose=False):
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    num_ys = len(jaxpr.out_avals) - num_carry
    const_nz, init_nz, xs_nz = _split([type(t) is not Zero for t in tangents],
                                      num_consts, num_carry)
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        nonzeros = const_nz + carry_nz + xs_nz
        jvp, nz_out = _jvp_jaxpr(jaxpr, nonzeros, carry_nz + [False] * num_ys)
        if nz_out[:num_carry] == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, nz_out[:num_carry])]
    else:  # pragma: no cover
        raise AssertionError("scan JVP: fixpoint not reached")
    tangents = [_instantiate(t) if nz else t for t, nz in zip(tangents, nonzeros)]
    consts, init, xs = _split(primals, num_consts, num_carry)
    consts_dot, init_dot, xs_dot = [_nonzero(ts) for ts in _split(tangents, num_consts, num_carry)]
    n_ys_dot = sum(nz_out) - len(init_dot)
    jvp = _permute_binders(
        jvp, _interleave_order([num_consts, num_carry, num_xs],
                               [len(consts_dot), len(init_dot), len(xs_dot)]),
        _interleave_order([num_carry, num_ys], [len(init_dot), n_ys_dot]))
    operands = [*consts, *consts_dot, *init, *init_dot, *xs, *xs_dot]
    outs = scan_p.bind(*operands, **_scan_params(
        jaxpr=jvp, length=length, reverse=reverse, unroll=unroll,
        num_consts=num_consts + len(consts_dot), num_carry=num_carry + len(init_dot),
        n_operands=len(operands)))
    carry, carry_dot, ys, ys_dot = _split(outs, num_carry, len(init_dot), num_ys)
    primals_out = carry + ys
    touts = iter(carry_dot + ys_dot)
    return primals_out, [next(touts) if nz else zero_of(p) for p, nz in zip(primals_out, nz_out)]


def _hoist_loop_invariants(primal: ClosedJaxpr, const_vals, num_known_outs, parent):
    """JAX's ``_scan_known_hoisting``: equations of the known body that depend only on
    the scan's consts are computed once, outside the loop (in ``parent``). Returns the
    body over ``[new consts, carry, xs]`` (dead equations dropped), the new consts,
    which residual outputs were hoisted, and their values."""
    j = primal.jaxpr
    n = len(const_vals)
    trace = DynamicJaxprTrace(j.debug_info)
    env, known = {}, set()
    for v, c in zip(j.constvars, primal.consts):
        env[v] = c
        known.add(v)
    for v, c in zip(j.invars[:n], const_vals):
        env[v] = c
        known.add(v)
    for v in j.invars[n:]:
        env[v] = trace.new_arg(v.aval)

    def read(x):
        return x if isinstance(x, Literal) else env[x]

    def is_known(x):
        return isinstance(x, Literal) or x in known

    try:
        bind_known_apart(j.eqns, env, known, parent, trace)
        res_vars = j.outvars[num_known_outs:]
        which_hoisted = [is_known(v) for v in res_vars]
        hoisted = [read(v) for v, h in zip(res_vars, which_hoisted) if h]
        outs = ([read(v) for v in j.outvars[:num_known_outs]]
                + [read(v) for v, h in zip(res_vars, which_hoisted) if not h])
        closed = trace.to_closed_jaxpr(outs)
    finally:
        trace.invalidate()
    jx = closed.jaxpr
    dced, used = _dce(jx)
    keep = [v in used for v in jx.constvars]
    new_consts = [c for c, k in zip(closed.consts, keep) if k]
    invars = [v for v, k in zip(jx.constvars, keep) if k] + jx.invars
    # JAX rebuilds this body from partial-evaluation tracers, where an output nobody reads
    # becomes a dropped binder (printed ``_``)
    eqns = [e if all(v in used for v in e.outvars) else
            e.replace(outvars=[v if v in used else DropVar(v.aval) for v in e.outvars])
            for e in dced.eqns]
    body = ClosedJaxpr(Jaxpr([], invars, jx.outvars, eqns, jx.debug_info), [])
    return body, new_consts, which_hoisted, hoisted


def _scan_known(parent, *args, jaxpr, length, reverse, unroll, num_consts, num_carry,
                linear=None, _split_transpose=False):
    """A scan of primal values inside a linearized rule (random.gamma's gradient): as JAX's
    partial evaluation of a scan with known operands, the body's loop invariants (equations
    of consts and literals only) are computed once, before the loop."""
    if jaxpr.effects:
        return scan_p.bind(*args, jaxpr=jaxpr, length=length, reverse=reverse, unroll=unroll,
                           num_consts=num_consts, num_carry=num_carry, linear=linear,
                           _split_transpose=_split_transpose)
    body, new_consts, _, _ = _hoist_loop_invariants(
        jaxpr, list(args[:num_consts]), len(jaxpr.out_avals), parent)
    operands = [*new_consts, *args[num_consts:]]
    return scan_p.bind(*operands, **_scan_params(
        jaxpr=body, length=length, reverse=reverse, unroll=unroll,
        num_consts=len(new_consts), num_carry=num_carry, n_operands=len(operands)))


def _scan_linearize(trace, primals, tangents, *, jaxpr, length, reverse, unroll, num_consts,
                    num_carry, linear=None, _split_transpose=False):
    num_ys = len(jaxpr.out_avals) - num_carry
    n_closed = len(jaxpr.consts)
    const_nz, init_nz, xs_nz = _split([type(t) is not Zero for t in tangents],
                                      num_consts, num_carry)
    allow_fwds = [True] * n_closed + [
        (i < num_consts or i >= num_consts + num_carry) and not isinstance(x, np.ndarray)
        for i, x in enumerate(primals)]
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        nonzeros = const_nz + carry_nz + xs_nz
        lin = _linearize_jaxpr(jaxpr, nonzeros, allow_fwds)
        inst = carry_nz + [False] * num_ys
        nzs_out = lin.nzs_out(inst)
        if nzs_out[:num_carry] == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, nzs_out[:num_carry])]
    else:  # pragma: no cover
        raise AssertionError("scan linearize: fixpoint not reached")
    n_primal_out = num_carry + num_ys
    const_in, carry_xs_in = primals[:num_consts], primals[num_consts:]
    primal, fwds, _, tangent = lin.finalize(inst)
    body, new_consts, which_hoisted, hoisted = _hoist_loop_invariants(
        primal, const_in, n_primal_out, trace.parent)

    # the linear body's binders: [intensive res, tangents, extensive res]
    hoisted_it = iter(which_hoisted)
    res_to_move = [not next(hoisted_it) if f is None else f >= n_closed + num_consts + num_carry
                   for f in fwds]
    n_res = len(fwds)
    tj = tangent.jaxpr
    res_binders, t_binders = tj.invars[:n_res], tj.invars[n_res:]
    tj = Jaxpr(tj.constvars, [v for v, m in zip(res_binders, res_to_move) if not m] + t_binders
               + [v for v, m in zip(res_binders, res_to_move) if m], tj.outvars, tj.eqns,
               tj.debug_info)
    tangent = ClosedJaxpr(tj, tangent.consts)

    if body.out_avals:
        operands = [*new_consts, *carry_xs_in]
        with set_current_trace(trace.parent):
            out = scan_p.bind(*operands, **_scan_params(
                jaxpr=body, length=length, reverse=reverse, unroll=unroll,
                num_consts=len(new_consts), num_carry=num_carry, n_operands=len(operands)))
    else:
        out = []
    primals_out, ext_res = out[:n_primal_out], out[n_primal_out:]
    if not any(nzs_out):
        return primals_out, [zero_of(p) for p in primals_out]

    ext_it, hoisted_it = iter(ext_res), iter(hoisted)
    computed = iter([next(hoisted_it) if h else next(ext_it) for h in which_hoisted])
    fwd_values = list(jaxpr.consts) + list(primals)
    res = [next(computed) if f is None else fwd_values[f] for f in fwds]
    int_res = [r for r, m in zip(res, res_to_move) if not m]
    ext_res = [r for r, m in zip(res, res_to_move) if m]
    with set_current_trace(trace.tangent_trace):
        nz_tangents = [_instantiate(t) for t, nz in zip(tangents, nonzeros) if nz]
        operands = [*int_res, *nz_tangents, *ext_res]
        touts = iter(scan_p.bind(*operands, **_scan_params(
            jaxpr=tangent, length=length, reverse=reverse, unroll=unroll,
            num_consts=len(int_res) + sum(const_nz), num_carry=sum(carry_nz),
            n_operands=len(operands))))
    return primals_out, [next(touts) if nz else zero_of(p) for p, nz in zip(primals_out, nzs_out)]


def _scan_transpose(cts, *args, jaxpr, length, reverse, unroll, num_consts, num_carry,
                    linear=None, _split_transpose=False):
    # JAX dead-code-eliminates the linear jaxpr before transposing it: outputs without
    # a cotangent are dropped (a carry stays while the loop still reads it), and with
    # them the operands (residuals included) the body then does not read.
    used_out = [type(c) is not Zero for c in cts]
    zeros = [Zero(a.aval) if is_undefined(a) else None for a in args]
    if not any(used_out):
        return zeros
    body, used_in, used_out = _scan_dce_body(jaxpr, num_consts, num_carry, used_out)
    used_c, used_k, _ = _split(used_in, num_consts, num_carry)
    kept_cts = [c for c, u in zip(cts, used_out) if u]
    kept = [a for a, u in zip(args, used_in) if u]
    cts_in = iter(_scan_transpose_kept(
        kept_cts, *kept, jaxpr=body, length=length, reverse=reverse, unroll=unroll,
        num_consts=sum(used_c), num_carry=sum(used_k)))
    return [next(cts_in) if u else z for u, z in zip(used_in, zeros)]


def _scan_transpose_kept(cts, *args, jaxpr, length, reverse, unroll, num_consts, num_carry):
    consts, carry, xs = _split(args, num_consts, num_carry)
    body = jaxpr.jaxpr
    cvars, kvars, xvars = _split(body.invars, num_consts, num_carry)
    c_lin = [is_undefined(a) for a in consts]
    x_lin = [is_undefined(a) for a in xs]
    k_lin = [is_undefined(a) for a in carry]

    def result(ct_consts, ct_carry, ct_xs):
        it_c, it_k, it_x = iter(ct_consts), iter(ct_carry), iter(ct_xs)
        return ([next(it_c) if lin else None for lin in c_lin]
                + [c if lin else None for c, lin in zip(it_k, k_lin)]
                + [next(it_x) if lin else None for lin in x_lin])

    lin_c_avals = [a.aval for a in consts if is_undefined(a)]
    lin_x_avals = [a.aval for a in xs if is_undefined(a)]
    ires = [a for a, lin in zip(consts, c_lin) if not lin]
    eres = [a for a, lin in zip(xs, x_lin) if not lin]
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    ct_carry = [_instantiate(c) for c in ct_carry]
    ys_nz = [type(c) is not Zero for c in ct_ys]
    ct_ys = _nonzero(ct_ys)
    ct_consts = [_zeros(a) for a in lin_c_avals]

    res_cvars = [v for v, lin in zip(cvars, c_lin) if not lin]
    lin_cvars = [v for v, lin in zip(cvars, c_lin) if lin]
    res_xvars = [v for v, lin in zip(xvars, x_lin) if not lin]
    lin_xvars = [v for v, lin in zip(xvars, x_lin) if lin]
    y_avals = body.out_avals[num_carry:]
    n_i, n_c, n_k, n_y = len(ires), len(ct_consts), len(ct_carry), len(ct_ys)

    # as JAX's ValAccums, the accumulators are typed by what they accumulate
    from traxla.lax.control_flow import _strip_leading as strip  # (the sharding kept)
    acc_avals = ([v.aval for v in lin_cvars] + [lax.aval_of(c) for c in ct_carry]
                 + [strip(a) for a in lin_x_avals])
    retyped, acc_vars = _retyped(body, lin_cvars + kvars + lin_xvars, acc_avals)
    eqns, outvars = retyped.eqns, retyped.outvars
    lin_cvars_ = acc_vars[:len(lin_cvars)]

    def transposed(*a):
        ires_, ctc, ctk, cty, eres_ = _split(a, n_i, n_c, n_k, n_y)
        cty = iter(cty)
        cty = [next(cty) if nz else Zero(tangent_aval(av)) for nz, av in zip(ys_nz, y_avals)]
        # the consts' running cotangents seed their binders (outputs listed first), so
        # contributions accumulate onto them as JAX's ValAccum does
        view = ClosedJaxpr(Jaxpr(list(body.constvars) + res_cvars + res_xvars, acc_vars,
                                 lin_cvars_ + outvars, eqns),
                           list(jaxpr.consts) + ires_ + eres_)
        in_cts = backward_pass(view, ctc + ctk + cty)
        return [_zeros(v.aval) if type(c) is Zero else c
                for c, v in zip(in_cts, acc_vars)]

    avals = ([lax.aval_of(x) for x in ires] + [v.aval for v in lin_cvars]
             + [lax.aval_of(x) for x in ct_carry]
             + [strip(lax.aval_of(x)) for x in ct_ys + eres])
    jt = trace_to_jaxpr(transposed, avals, make_debug_info(transposed, "transpose", ()))
    operands = [*ires, *ct_consts, *ct_carry, *ct_ys, *eres]
    outs = scan_p.bind(*operands, **_scan_params(
        jaxpr=jt, length=length, reverse=not reverse, unroll=unroll, num_consts=n_i,
        num_carry=n_c + n_k, n_operands=len(operands)))
    return result(*_split(outs, n_c, n_k))


jvp_rules[scan_p] = _scan_jvp
linearize_rules[scan_p] = _scan_linearize
known_rules[scan_p] = _scan_known
transpose_rules[scan_p] = _scan_transpose


# -- while ---------------------------------------------------------------------------

def _while_jvp_parts(primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """The JVP ``while``: (operands, params, nonzero carry tangents)."""
    nz = [type(t) is not Zero for t in tangents]
    cconst_nz, bconst_nz, init_nz = _split(nz, cond_nconsts, body_nconsts)
    num_carry = len(init_nz)
    carry_nz = init_nz
    for _ in range(1 + num_carry):
        body_nonzeros = bconst_nz + carry_nz
        body_jvp, nz_out = _jvp_jaxpr(body_jaxpr, body_nonzeros, carry_nz)
        if nz_out == carry_nz:
            break
        carry_nz = [a or b for a, b in zip(carry_nz, nz_out)]
    else:  # pragma: no cover
        raise AssertionError("while JVP: fixpoint not reached")
    nonzeros = cconst_nz + body_nonzeros
    tangents = [_instantiate(t) if n else t for t, n in zip(tangents, nonzeros)]
    cconst, bconst, init = _split(primals, cond_nconsts, body_nconsts)
    _, bconst_dot, init_dot = [_nonzero(ts) for ts in _split(tangents, cond_nconsts, body_nconsts)]
    body_jvp = _permute_binders(
        body_jvp, _interleave_order([body_nconsts, num_carry], [len(bconst_dot), len(init_dot)]),
        range(len(body_jvp.out_avals)))
    cj = cond_jaxpr.jaxpr
    cond_aug = ClosedJaxpr(Jaxpr(cj.constvars, cj.invars + [Var(lax.aval_of(t)) for t in init_dot],
                                 cj.outvars, cj.eqns, cj.debug_info), cond_jaxpr.consts)
    operands = [*cconst, *bconst, *bconst_dot, *init, *init_dot]
    params = dict(cond_jaxpr=cond_aug, body_jaxpr=body_jvp, cond_nconsts=cond_nconsts,
                  body_nconsts=len(bconst) + len(bconst_dot))
    return operands, params, nz_out, body_nonzeros


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    operands, params, nz_out, _ = _while_jvp_parts(primals, tangents, cond_jaxpr, body_jaxpr,
                                                   cond_nconsts, body_nconsts)
    outs = while_p.bind(*operands, **params)
    n = len(nz_out)
    carry, dots = outs[:n], iter(outs[n:])
    return carry, [next(dots) if z else zero_of(p) for p, z in zip(carry, nz_out)]


def _while_linearize(trace, primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts,
                     body_nconsts):
    # As JAX's partial evaluation of ``while``: a known loop computes the primal
    # outputs; the whole JVP loop (primals recomputed) is staged as the linear part.
    operands, params, nz_out, bnz = _while_jvp_parts(primals, tangents, cond_jaxpr, body_jaxpr,
                                                     cond_nconsts, body_nconsts)

    def known_body(*args):
        return linearize_flat(lambda *a: eval_jaxpr(body_jaxpr, (), *a), list(args),
                              "linearize", bnz)[0]

    body_known = trace_to_jaxpr(known_body, list(body_jaxpr.in_avals),
                                make_debug_info(known_body, "linearize", ()))
    # (JAX's known cond_jaxpr comes out of partial evaluation: a copy with fresh binders)
    cond_known = trace_to_jaxpr(lambda *a: eval_jaxpr(cond_jaxpr, (), *a),
                                list(cond_jaxpr.in_avals),
                                make_debug_info(known_body, "linearize", ()))
    with set_current_trace(trace.parent):
        primal_outs = while_p.bind(*primals, cond_jaxpr=cond_known, body_jaxpr=body_known,
                                   cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    if not any(nz_out):
        return primal_outs, [zero_of(p) for p in primal_outs]
    with set_current_trace(trace.tangent_trace):
        outs = while_p.bind(*operands, **params)
    dots = iter(outs[len(nz_out):])
    return primal_outs, [next(dots) if z else zero_of(p) for p, z in zip(primal_outs, nz_out)]


_WHILE_TRANSPOSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop.")


def _while_transpose(*args, **params):
    raise ValueError(_WHILE_TRANSPOSE_ERROR)


jvp_rules[while_p] = _while_jvp
linearize_rules[while_p] = _while_linearize
transpose_rules[while_p] = _while_transpose
