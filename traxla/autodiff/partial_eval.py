"""Dead-code elimination of jaxprs as JAX's ``pe.dce_jaxpr``, into the bodies and branches of
``scan``, ``cond`` and ``jit`` (their DCE rules), used by the control-flow and call rules of
autodiff (linear jaxprs before transposing, known jaxprs of linearized calls)."""
from __future__ import annotations

from itertools import chain
from operator import attrgetter, itemgetter

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, Literal, eqns_with_subjaxprs
from traxla.ir.effects import has_effects
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.control_flow import cond_p, scan_p
from traxla.runtime.cache import on_clear
from traxla.tracer import Tracer
from traxla.tracer.traces import set_current_trace


def _split(xs, *sizes):
    """``xs`` cut into consecutive pieces of the given sizes, plus the rest."""
    out, i = [], 0
    for s in sizes:
        out.append(list(xs[i:i + s]))
        i += s
    out.append(list(xs[i:]))
    return out



def bind_known_apart(eqns, env, known, known_trace, unknown_trace):
    """Partial evaluation's loop (JAX's ``partial_eval_jaxpr_nounits``): each equation whose
    operands are all known (Literals or vars in ``known``) is bound in ``known_trace`` and its
    outputs become known; the others are bound in ``unknown_trace``. ``env`` maps vars to
    values and is filled in."""
    for eqn in eqns:
        k = all(isinstance(x, Literal) or x in known for x in eqn.invars)
        with set_current_trace(known_trace if k else unknown_trace):
            outs = eqn.primitive.bind(*[x if isinstance(x, Literal) else env[x]
                                        for x in eqn.invars], **eqn.params)
        for v, o in zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]):
            env[v] = o
            if k:
                known.add(v)


def _dce(jaxpr: Jaxpr):
    """Drops whole equations that no output depends on; returns (jaxpr, used vars)."""
    used = {v for v in jaxpr.outvars if isinstance(v, Var)}
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in used for v in eqn.outvars) or has_effects(eqn):
            eqns.append(eqn)
            used.update(a for a in eqn.invars if isinstance(a, Var))
    eqns.reverse()
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns, jaxpr.debug_info), used


def _dce_jaxpr(jaxpr: Jaxpr, used_outputs, instantiate):
    """JAX's ``pe.dce_jaxpr``: drops unused equations, and unused outputs and inputs of
    ``scan``, ``cond`` and ``jit`` equations (their DCE rules); the invars kept are the
    used or instantiated ones. Returns (jaxpr, used inputs)."""
    used: set = set()
    for v, u in zip(jaxpr.outvars, used_outputs):
        if u and isinstance(v, Var):
            used.add(v)
    eqns = []
    for eqn in reversed(jaxpr.eqns):
        used_outs = [v in used for v in eqn.outvars]
        rule = _dce_rules.get(eqn.primitive)
        if has_effects(eqn):  # never dropped, nor its operands (JAX keeps effectful eqns)
            used_ins, new = [True] * len(eqn.invars), eqn
        elif rule is None:
            used_ins, new = (([True] * len(eqn.invars), eqn) if any(used_outs)
                             else ([False] * len(eqn.invars), None))
        else:
            used_ins, new = rule(used_outs, eqn)
        if new is not None:
            eqns.append(new)
        used.update(v for v, u in zip(eqn.invars, used_ins) if u and isinstance(v, Var))
    eqns.reverse()
    used_inputs = [i or v in used for v, i in zip(jaxpr.invars, instantiate)]
    new = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u],
                [v for v, u in zip(jaxpr.outvars, used_outputs) if u], eqns, jaxpr.debug_info)
    return new, used_inputs


def prune_unused(jaxpr: Jaxpr, read: set | None = None):
    """``_dce_jaxpr(jaxpr, all outputs used, no input instantiated)`` for a whole program
    before lowering (JAX's ``_prune_unused_inputs``): (jaxpr, used inputs), ``jaxpr``
    itself when no equation is dead. Most programs have none, and C-level passes show it:
    a dead equation exists exactly when some equation has no output that is read (the
    last dead one in program order); equations with DCE rules (jit, scan, cond, remat)
    run their rule, and anything else found goes the per-equation way. ``read``: the set
    of the equations' operands where the caller has made it (it is updated here)."""
    eqns = jaxpr.eqns
    if read is None:
        read = set(chain.from_iterable(map(_invars_of, eqns)))
    read.update(jaxpr.outvars)
    try:
        every_eqn_read = read.issuperset(map(_first, map(_outvars_of, eqns)))
    except IndexError:  # equations without results: kept only for their effects
        every_eqn_read = (read.issuperset(map(_first, filter(None, map(_outvars_of, eqns))))
                          and all(has_effects(e) for e in eqns if not e.outvars))
    replaced = {}
    if every_eqn_read:
        # an inner jit called again and again (a loop's step calling a jnp helper): its
        # effects and DCE worked out once per distinct jaxpr (``_jit_dce`` with every
        # output used), each call only given the pruned jaxpr
        jit_calls = {}
        for eqn in eqns_with_subjaxprs(jaxpr):
            prim = eqn.primitive
            rule = _dce_rules.get(prim)
            if rule is None:
                continue
            if prim is jit_p:
                closed = eqn.params["jaxpr"]
                hit = jit_calls.get(id(closed))
                if hit is None:
                    hit = jit_calls[id(closed)] = (
                        None if has_effects(eqn)
                        else dce_closed(closed, [True] * len(eqn.outvars),
                                        [False] * len(closed.in_avals)))
                if hit is None:  # effects: kept as it is
                    continue
                if read.issuperset(eqn.outvars):
                    new, used_ins = hit
                    if not all(used_ins):  # it drops operands: the general walk
                        every_eqn_read = False
                        break
                    replaced[id(eqn)] = JaxprEqn(eqn.invars, eqn.outvars, prim,
                                                 {**eqn.params, "jaxpr": new},
                                                 eqn.source_info)
                    continue
            elif has_effects(eqn):
                continue
            used_ins, new = rule([v in read for v in eqn.outvars], eqn)
            if new is None or not all(used_ins):  # it drops operands: the general walk
                every_eqn_read = False
                break
            replaced[id(eqn)] = new
    if not every_eqn_read:
        return _dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), [False] * len(jaxpr.invars))
    used_inputs = [v in read for v in jaxpr.invars]
    if replaced or not all(used_inputs):
        jaxpr = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, used_inputs) if u],
                      jaxpr.outvars, [replaced.get(id(e), e) for e in eqns] if replaced
                      else eqns, jaxpr.debug_info)
    return jaxpr, used_inputs


_invars_of = attrgetter("invars")
_outvars_of = attrgetter("outvars")
_first = itemgetter(0)


# As JAX caches ``dce_jaxpr``: a jaxpr called twice (one jit, twice) and pruned the same way
# stays one shared jaxpr. Keys hold the jaxpr itself so that an id is never reused.
_dce_cache: dict = {}
_DCE_CACHE_LIMIT = 4096
on_clear(_dce_cache.clear)


def dce_closed(closed: ClosedJaxpr, used_outputs, instantiate):
    key = (id(closed), tuple(used_outputs), tuple(instantiate))
    hit = _dce_cache.get(key)
    if hit is not None and hit[0] is closed:
        return hit[1], list(hit[2])
    new, used_inputs = _dce_jaxpr(closed.jaxpr, used_outputs, instantiate)
    result = ClosedJaxpr(new, closed.consts)
    if not any(isinstance(c, Tracer) for c in closed.consts):
        if len(_dce_cache) >= _DCE_CACHE_LIMIT:  # bounded: drop all rather than grow
            _dce_cache.clear()
        _dce_cache[key] = (closed, result, list(used_inputs))
    return result, used_inputs


def _scan_dce_body(closed, num_consts, num_carry, used_outputs):
    """JAX's ``_scan_dce_rule`` on a body: (body, used inputs, used outputs), a carry
    kept when its output or the carried value is used (a fixpoint)."""
    num_xs = len(closed.in_avals) - num_consts - num_carry
    used_carry, used_ys = list(used_outputs[:num_carry]), list(used_outputs[num_carry:])
    for _ in range(1 + num_carry):
        body, used_inputs = dce_closed(
            closed, used_carry + used_ys, [False] * num_consts + used_carry + [False] * num_xs)
        used_carry_in = used_inputs[num_consts:num_consts + num_carry]
        if used_carry_in == used_carry:
            break
        used_carry = [a or b for a, b in zip(used_carry, used_carry_in)]
    else:  # pragma: no cover
        raise AssertionError("scan DCE: fixpoint not reached")
    return body, used_inputs, used_carry + used_ys


def _scan_dce(used_outputs, eqn):
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    p = eqn.params
    num_consts, num_carry = p["num_consts"], p["num_carry"]
    body, used_inputs, used_outputs = _scan_dce_body(p["jaxpr"], num_consts, num_carry,
                                                     used_outputs)
    used_consts, used_carry, _ = _split(used_inputs, num_consts, num_carry)
    invars = [v for v, u in zip(eqn.invars, used_inputs) if u]
    params = dict(p, jaxpr=body, num_consts=sum(used_consts), num_carry=sum(used_carry),
                  linear=tuple(x for x, u in zip(p.get("linear") or (False,) * len(eqn.invars),
                                                  used_inputs) if u))
    return used_inputs, eqn.replace(
        invars=invars, outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u], params=params)


def _cond_used_inputs(branches, used_outputs):
    used_inputs = [False] * len(branches[0].in_avals)
    for b in branches:
        _, used = _dce_jaxpr(b.jaxpr, used_outputs, [False] * len(used_inputs))
        used_inputs = [a or c for a, c in zip(used_inputs, used)]
    return used_inputs


def _cond_dce(used_outputs, eqn):
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    branches = eqn.params["branches"]
    used_inputs = _cond_used_inputs(branches, used_outputs)
    new_branches = tuple(dce_closed(b, used_outputs, used_inputs)[0] for b in branches)
    return [True] + used_inputs, eqn.replace(
        invars=[v for v, u in zip(eqn.invars, [True] + used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(eqn.params, branches=new_branches))


def _jit_dce(used_outputs, eqn):
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    closed = eqn.params["jaxpr"]
    new, used_inputs = dce_closed(closed, used_outputs, [False] * len(closed.in_avals))
    return used_inputs, eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs) if u],
        params=dict(eqn.params, jaxpr=new))


def _dce_consts(closed: ClosedJaxpr) -> ClosedJaxpr:
    """JAX's ``ad._dce_consts``: every output used, every input kept, unused consts and
    equations dropped."""
    j = closed.jaxpr
    nc = len(j.constvars)
    flat = Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.debug_info)
    new, used = _dce_jaxpr(flat, [True] * len(j.outvars), [False] * nc + [True] * len(j.invars))
    constvars = [v for v, u in zip(j.constvars, used[:nc]) if u]
    consts = [c for c, u in zip(closed.consts, used[:nc]) if u]
    return ClosedJaxpr(Jaxpr(constvars, j.invars, new.outvars, new.eqns, j.debug_info), consts)


_dce_rules = {cond_p: _cond_dce, scan_p: _scan_dce, jit_p: _jit_dce}
