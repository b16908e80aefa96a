"""State discharge: a jaxpr with array refs becomes a pure jaxpr (JAX's
``jax/_src/state/discharge.py``).

The jaxpr is re-evaluated under a fresh staging trace with each ref standing for a
Python cell that holds the ref's current value: ``get`` indexes it, ``swap`` and
``addupdate`` replace it by an updated copy, ``freeze`` reads it. Mutations happen in
program order, so the recorded jaxpr computes what the mutations meant. Refs that cross
into a loop body become loop carries; refs passed to a nested ``jit`` are inlined;
a jaxpr that takes refs as inputs gets their final values as extra outputs.
"""
from __future__ import annotations

import numpy as np

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, subjaxprs
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
from traxla.ir.rules.refs import (addupdate_p, empty_ref_p, free_ref_p, freeze_p, get_p,
                            is_ref_aval, jaxpr_has_refs, new_ref_p, swap_p)
from traxla.tracer.staging import trace_to_jaxpr
from traxla.autodiff.custom import custom_vjp_call_p
from traxla import primitives as prims
from traxla.state.ref import numpy_api
from traxla.tracer.interpret import eval_jaxpr


class _Cell:
    """A ref during discharge: its current value."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _is_cell(x) -> bool:
    return type(x) is _Cell or type(x) is _state_ref.Ref  # a Ref object is its own cell


def discharge_call(prim, args, params):
    """Runs a loop, cond or jit whose operands include ``Ref`` objects (or whose body
    creates refs) outside staging: discharged, each ``Ref`` updated in place."""
    class _Eqn:
        pass
    eqn = _Eqn()
    eqn.primitive, eqn.params = prim, params
    boxes = [a for a in args if type(a) is _state_ref.Ref]
    outs = _RULES[prim](eqn, list(args))
    for box in boxes:  # a value of a transformation the Ref was made outside: unwrapped
        box._value = _state_ref._value_for(box, box._value)
    return outs


def _literal_value(x):
    if isinstance(x, Literal):
        return np.asarray(x.val, dtype=x.aval.dtype)
    return x


def _as_value(x):
    """An operand as something ``.at[...]`` works on (a literal becomes an array)."""
    if isinstance(x, (Literal, np.ndarray, np.generic)):
        return numpy_api.asarray(_literal_value(x))
    return x


def discharge(closed: ClosedJaxpr) -> ClosedJaxpr:
    """The pure version of ``closed``: each ``Ref{T}`` input becomes a ``T`` input whose
    final value is appended to the outputs, in input order."""
    jaxpr = closed.jaxpr
    if any(_is_cell(c) for c in closed.consts):
        raise ValueError(
            "A jit-compiled function closes over a Ref created outside it; pass the Ref "
            "as an argument of the jit-compiled function instead.")
    in_avals = [a.inner_aval if is_ref_aval(a) else a for a in jaxpr.in_avals]
    ref_inputs = [is_ref_aval(a) for a in jaxpr.in_avals]

    def pure(*args):
        cells = [_Cell(a) if r else a for a, r in zip(args, ref_inputs)]
        outs = eval_discharged(jaxpr, closed.consts, cells)
        return outs + [c.value for c, r in zip(cells, ref_inputs) if r]

    return trace_to_jaxpr(pure, in_avals, jaxpr.debug_info)


def discharge_if_needed(closed: ClosedJaxpr, operands=None) -> ClosedJaxpr:
    """``operands``: the set of the operands of the jaxpr's equations, where the caller
    has made it (see ``jaxpr_has_refs``)."""
    return discharge(closed) if jaxpr_has_refs(closed.jaxpr, operands) else closed


def _returned_ref_error(v):
    return ValueError(f"a jaxpr returned a mutable array reference of type {v.aval}, but "
                      "mutable array references cannot be returned.")


def eval_discharged(jaxpr: Jaxpr, consts, args):
    """Evaluates ``jaxpr`` in the current trace, refs as cells (see the module doc)."""
    env = {}

    def read(x):
        return x if type(x) is Literal else env[x]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = _Cell(c) if is_ref_aval(v.aval) and not _is_cell(c) else c
    for v, a in zip(jaxpr.invars, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        invals = [read(x) for x in eqn.invars]
        rule = _RULES.get(eqn.primitive)
        if rule is not None:
            outs = rule(eqn, invals)
        elif any(_is_cell(x) for x in invals):
            raise NotImplementedError(
                f"A Ref was passed to `{eqn.primitive.name}`, which traxla cannot discharge "
                "(refs may cross jit, scan, fori_loop, while_loop and cond).")
        else:
            params = eqn.params
            if any(jaxpr_has_refs(s) for s in subjaxprs(params)):
                params = _discharged_params(params)
            outs = eqn.primitive.bind(*invals, **params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        for v, o in zip(eqn.outvars, outs):
            env[v] = o
    results = []
    for v in jaxpr.outvars:
        value = read(v)
        if isinstance(value, _Cell):
            raise _returned_ref_error(v)
        results.append(value)
    return results


def _discharged_params(params):
    """Sub-jaxprs that create and retire their own refs (no ref crosses their boundary)."""
    def fix(value):
        if isinstance(value, ClosedJaxpr) and jaxpr_has_refs(value.jaxpr):
            return discharge(value)
        if isinstance(value, Jaxpr) and jaxpr_has_refs(value):
            return discharge(ClosedJaxpr(value, ())).jaxpr
        return value
    return {k: tuple(map(fix, v)) if type(v) is tuple else fix(v) for k, v in params.items()}


# -- the ref primitives ------------------------------------------------------------------

def _index(tree, idx):
    return _state_ref.numpy_index(tree, [_literal_value(i) for i in idx])


def _new_ref(eqn, invals):
    return [_Cell(_as_value(invals[0]))]


def _empty_ref(eqn, invals):
    ty = eqn.params["ty"]
    return [_Cell(prims.full(ty.shape, 0, ty.dtype))]


def _get(eqn, invals):
    cell, *idx = invals
    tree = eqn.params["tree"]
    return [cell.value if tree.trivial else cell.value[_index(tree, idx)]]


def _swap(eqn, invals):
    cell, value, *idx = invals
    value = _as_value(value)
    tree = eqn.params["tree"]
    if tree.trivial:
        old, cell.value = cell.value, value
        return [old]
    index = _index(tree, idx)
    old = cell.value[index]
    cell.value = cell.value.at[index].set(value)
    return [old]


def _addupdate(eqn, invals):
    cell, value, *idx = invals
    value = _as_value(value)
    tree = eqn.params["tree"]
    if tree.trivial:
        cell.value = cell.value + value
    else:
        cell.value = cell.value.at[_index(tree, idx)].add(value)
    return []


def _freeze(eqn, invals):
    return [invals[0].value]


def _free_ref(eqn, invals):
    return []


# -- refs crossing a call or a loop ------------------------------------------------------

def _jit(eqn, invals):
    closed = eqn.params["jaxpr"]
    if not any(_is_cell(x) for x in invals):
        return jit_p.bind(*invals, **_discharged_params(eqn.params))
    return eval_discharged(closed.jaxpr, closed.consts, invals)


def _split(values, ref_positions):
    return ([v for v, r in zip(values, ref_positions) if r],
            [v for v, r in zip(values, ref_positions) if not r])


def _body_with_ref_carries(closed, ref_mask):
    """A pure body whose invars are ``plain leading + ref values + rest`` and whose
    outputs are ``ref values + outs``, from a body whose first ``len(ref_mask)`` invars
    hold refs where ``ref_mask`` says."""
    jaxpr = closed.jaxpr
    avals = jaxpr.in_avals
    n_lead = len(ref_mask)
    lead = avals[:n_lead]
    ref_avals = [a.inner_aval for a, r in zip(lead, ref_mask) if r]
    plain_lead = [a for a, r in zip(lead, ref_mask) if not r]
    in_avals = plain_lead + ref_avals + avals[n_lead:]
    n_plain, n_refs = len(plain_lead), len(ref_avals)

    def body(*args):
        plain_it = iter(args[:n_plain])
        cells = [_Cell(v) for v in args[n_plain:n_plain + n_refs]]
        cell_it = iter(cells)
        lead_vals = [next(cell_it) if r else next(plain_it) for r in ref_mask]
        outs = eval_discharged(jaxpr, closed.consts, lead_vals + list(args[n_plain + n_refs:]))
        return [c.value for c in cells] + outs

    return trace_to_jaxpr(body, in_avals, jaxpr.debug_info)


def _scan(eqn, invals):
    params = dict(eqn.params)
    n_consts, n_carry = params["num_consts"], params["num_carry"]
    if not any(_is_cell(x) for x in invals):
        return scan_p.bind(*invals, **_discharged_params(params))
    if any(_is_cell(x) for x in invals[n_consts:]):
        raise NotImplementedError("A Ref as a scan carry or scanned-over value is not "
                                  "supported; close over it instead.")
    consts = invals[:n_consts]
    ref_mask = [_is_cell(c) for c in consts]
    cells, plain_consts = _split(consts, ref_mask)
    # body invars: [plain consts, ref carries, carries, xs]; outs: [ref carries, carries, ys]
    body = _body_with_ref_carries(params["jaxpr"], ref_mask)
    n_refs = len(cells)
    params.update(jaxpr=body, num_consts=len(plain_consts), num_carry=n_carry + n_refs,
                  linear=(False,) * (len(invals)))
    outs = scan_p.bind(*plain_consts, *[c.value for c in cells], *invals[n_consts:], **params)
    for c, v in zip(cells, outs[:n_refs]):
        c.value = v
    return outs[n_refs:]


def _while(eqn, invals):
    params = dict(eqn.params)
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    if not any(_is_cell(x) for x in invals):
        return while_p.bind(*invals, **_discharged_params(params))
    cond_consts, body_consts, init = invals[:nc], invals[nc:nc + nb], invals[nc + nb:]
    if any(_is_cell(x) for x in init):
        raise NotImplementedError("A Ref carried by a while_loop is not supported; close "
                                  "over it instead.")
    # each distinct ref read by the condition or the body becomes one carry, seen by both
    cells = []
    for c in cond_consts + body_consts:
        if _is_cell(c) and not any(c is k for k in cells):
            cells.append(c)
    ref_avals = [_as_value(c.value).aval for c in cells]
    cond_plain = [c for c in cond_consts if not _is_cell(c)]
    body_plain = [c for c in body_consts if not _is_cell(c)]
    cond_closed = _loop_fun_over_ref_carries(params["cond_jaxpr"], cond_consts, cells,
                                             ref_avals, False)
    body_closed = _loop_fun_over_ref_carries(params["body_jaxpr"], body_consts, cells,
                                             ref_avals, True)
    params.update(body_jaxpr=body_closed, cond_jaxpr=cond_closed,
                  cond_nconsts=len(cond_plain), body_nconsts=len(body_plain))
    outs = while_p.bind(*cond_plain, *body_plain, *[_as_value(c.value) for c in cells], *init,
                        **params)
    n_refs = len(cells)
    for c, v in zip(cells, outs[:n_refs]):
        c.value = v
    return outs[n_refs:]


def _loop_fun_over_ref_carries(closed, consts, cells, ref_avals, returns_refs):
    """A while loop's condition or body as a pure function of ``plain consts + ref values +
    carries``: each ref among ``consts`` reads (and writes) the carried value of its cell in
    ``cells``; a body also returns the final ref values ahead of its outputs."""
    jaxpr = closed.jaxpr
    n = len(consts)
    plain_avals = [a for a, c in zip(jaxpr.in_avals[:n], consts) if not _is_cell(c)]
    n_plain, n_refs = len(plain_avals), len(cells)

    def fun(*args):
        plain_it = iter(args[:n_plain])
        carried = [_Cell(v) for v in args[n_plain:n_plain + n_refs]]
        lead = [carried[next(k for k, cell in enumerate(cells) if cell is c)] if _is_cell(c)
                else next(plain_it) for c in consts]
        outs = eval_discharged(jaxpr, closed.consts, lead + list(args[n_plain + n_refs:]))
        return [c.value for c in carried] + outs if returns_refs else outs

    return trace_to_jaxpr(fun, plain_avals + ref_avals + jaxpr.in_avals[n:], jaxpr.debug_info)


def _cond(eqn, invals):
    params = dict(eqn.params)
    index, *ops = invals
    if not any(_is_cell(x) for x in ops):
        return cond_p.bind(*invals, **_discharged_params(params))
    ref_mask = [_is_cell(x) for x in ops]
    cells, plain = _split(ops, ref_mask)
    branches = tuple(_body_with_ref_carries(b, ref_mask)
                     for b in params["branches"])
    params.update(branches=branches)
    outs = cond_p.bind(index, *plain, *[c.value for c in cells], **params)
    n_refs = len(cells)
    for c, v in zip(cells, outs[:n_refs]):
        c.value = v
    return outs[n_refs:]


def _custom_vjp_call(eqn, invals):
    """A custom_vjp function called with refs: one pure ``custom_vjp_call`` of the refs'
    values, their final values extra results, so that a later ``grad`` still applies the
    user's rules; its ``fwd`` runs the user's on fresh refs of those values."""
    params = dict(eqn.params)
    if not any(_is_cell(x) for x in invals):
        return custom_vjp_call_p.bind(*invals, **_discharged_params(params))
    ref_mask = [_is_cell(x) for x in invals]
    cells = [x for x in invals if _is_cell(x)]
    n_consts = params["num_consts"]
    if any(ref_mask[:n_consts]):
        raise NotImplementedError("a custom_vjp function closing over a Ref is not supported; "
                                  "pass the Ref as an argument.")
    call = params["call_jaxpr"]
    n_outs = len(call.out_avals)
    fwd, bwd = params["fwd"], params["bwd"]
    arg_mask = ref_mask[n_consts:]

    def pure_fwd(*xs, perturbed=None):
        refs = [_state_ref.new_ref(x) if m else x for x, m in zip(xs, arg_mask)]
        outs, res = fwd(*refs) if perturbed is None else fwd(*refs, perturbed=perturbed)
        if any(_state_ref.is_ref(r) for r in res):
            raise NotImplementedError(
                f"the custom_vjp fwd rule {fwd} returns a Ref among its residuals, which "
                "traxla supports outside jit only.")
        finals = [_state_ref.freeze(r) for r, m in zip(refs, arg_mask) if m]
        return list(outs) + finals, res

    def pure_bwd(res, cts):
        return bwd(res, list(cts)[:n_outs])

    outs = custom_vjp_call_p.bind(
        *[_as_value(c.value) if m else x for x, m, c in
          zip(invals, ref_mask, [x if _is_cell(x) else None for x in invals])],
        **dict(params, call_jaxpr=discharge(call), fwd=type(fwd)(pure_fwd, str(fwd)),
               bwd=type(bwd)(pure_bwd, str(bwd))))
    for c, v in zip(cells, outs[n_outs:]):
        c.value = v
    return outs[:n_outs]


_RULES = {new_ref_p: _new_ref, empty_ref_p: _empty_ref, get_p: _get, swap_p: _swap,
          addupdate_p: _addupdate, freeze_p: _freeze, free_ref_p: _free_ref, jit_p: _jit,
          scan_p: _scan, while_p: _while, cond_p: _cond, custom_vjp_call_p: _custom_vjp_call}

import traxla.state.ref as _state_ref  # noqa: E402  (it imports this module: bound once both are defined)
