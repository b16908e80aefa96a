"""Mosaic lowering rules for a kernel's control flow: ``cond`` (``pl.when``) as
``scf.if``, ``scan`` and ``while`` as JAX lowers them (a counted loop, JAX's fori pattern,
as ``scf.for``; any other ``while`` as ``scf.while``), and calls inlined (nested ``jit``,
``custom_jvp``/``custom_vjp`` functions)."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import DropVar, Jaxpr, Literal
from traxla.lowering.mosaic.dialects import arith, ir, scf
from traxla.lowering.mosaic.kernel import Lit, constant, ensure_value, register, value_type

_I32_AVAL = ShapedArray((), np.dtype(np.int32))


@register("cond")
def _cond(ctx, index, *args, branches, **_):
    args = [ensure_value(a, v) for a, v in zip(args, ctx.avals_in[1:])]
    if isinstance(index, Lit):
        return ctx.emit(branches[int(index.val)].jaxpr, args)
    return _if_cascade(ctx, index, args, branches)


def _if_cascade(ctx, index, args, branches):
    """``scf.if index != 0`` with branch 0 in the else block; more than two branches nest
    in the then block on ``index - 1`` (JAX's cascade)."""
    out_types = [value_type(a) for a in ctx.avals_out]
    pred = arith.cmpi(arith.CmpIPredicate.ne, index, constant(0, index.type))
    if_op = scf.IfOp(pred, out_types, has_else=True)
    with ir.InsertionPoint(if_op.then_block):
        if len(branches) > 2:
            rest = arith.subi(index, constant(1, index.type))
            scf.YieldOp(_if_cascade(ctx, rest, args, branches[1:]))
        else:
            scf.YieldOp(ctx.emit(branches[1].jaxpr, args))
    with ir.InsertionPoint(if_op.else_block):
        scf.YieldOp(ctx.emit(branches[0].jaxpr, args))
    return list(if_op.results)


@register("jit", "pjit", "closed_call", "core_call")
def _inline(ctx, *args, jaxpr=None, call_jaxpr=None, **_):
    inner = jaxpr if jaxpr is not None else call_jaxpr
    inner = getattr(inner, "jaxpr", inner)
    args = [ensure_value(a, v) for a, v in zip(args, ctx.avals_in)]
    return ctx.emit(inner, args, call=True)


def _scan_as_fori(jaxpr, num_consts, num_carry):
    """JAX's ``pattern_match_scan_to_fori_loop``: a scan whose first carry is an ``i32``
    index incremented by one is a counted loop; the increment and that output go."""
    if len(jaxpr.outvars) != num_carry or len(jaxpr.invars) != num_consts + num_carry:
        raise ValueError("Scan with extensive inputs or outputs is not supported.")
    if not num_carry:
        return jaxpr, False
    index_in, index_out = jaxpr.invars[num_consts], jaxpr.outvars[0]
    if index_in.aval.shape or np.dtype(index_in.aval.dtype) not in (np.int32, np.int64):
        return jaxpr, False
    for i, eqn in enumerate(jaxpr.eqns):
        if (eqn.primitive.name == "add" and eqn.invars[0] is index_in
                and isinstance(eqn.invars[1], Literal) and eqn.invars[1].val == 1
                and eqn.outvars[0] is index_out):
            return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars[1:],
                         jaxpr.eqns[:i] + jaxpr.eqns[i + 1:]), True
    return jaxpr, False


def _reads(jaxpr) -> set:
    """The variables ``jaxpr`` reads (its equations' operands and its outputs)."""
    read = {v for e in jaxpr.eqns for v in e.invars if not isinstance(v, Literal)}
    read.update(v for v in jaxpr.outvars if not isinstance(v, Literal))
    return read


@register("scan")
def _scan(ctx, *args, jaxpr, length, reverse, unroll, num_consts, num_carry, **_):
    if reverse:
        raise NotImplementedError("reverse scans")
    if jaxpr.consts:
        raise NotImplementedError("scans closing over constants")
    unroll = length if unroll is True or unroll == 0 else 1 if unroll is False else int(unroll)
    body, has_index = _scan_as_fori(jaxpr.jaxpr, num_consts, num_carry)
    avals = ctx.avals_in
    consts, carry = list(args[:num_consts]), list(args[num_consts:])
    const_avals, carry_avals = avals[:num_consts], avals[num_consts:]
    i32 = ir.IntegerType.get_signless(32)
    start = 0
    if has_index:
        start, carry, carry_avals = carry[0], carry[1:], carry_avals[1:]
    read = _reads(body)
    # (every constant is made, as JAX's rule makes them: where the kernel's dead-code pass
    # reached this loop, it dropped those the body does not read)
    consts = [ensure_value(c, a) for c, a in zip(consts, const_avals)]
    carry = [ensure_value(c, a) for c, a in zip(carry, carry_avals)]
    results = _unrolled(ctx, body, start, length, unroll, consts, carry, has_index)
    if has_index:  # (JAX's dead-code pass drops an index nothing reads: then no constant)
        index_out = ctx.eqn.outvars[0]
        index_read = body.invars[num_consts] in read or (
            not isinstance(index_out, DropVar) and index_out in ctx.used)
        final = constant(length, i32) if index_read else None
        results = [final, *results]
    return results


def _unrolled(ctx, body, start, length, unroll, consts, carry, has_index):
    """JAX's ``_lower_jaxpr_to_for_loop`` with a static trip count: the body ``unroll``
    times per step of an ``scf.for`` stepping by ``unroll`` (no loop when a static start's
    trip count is ``unroll``: the loop is unrolled whole, even a single step), then the
    remaining steps one after another."""
    i32 = ir.IntegerType.get_signless(32)
    if isinstance(start, Lit):  # (a static start, as JAX's rule sees a literal)
        start = int(start.val)

    def run(i, args):
        return ctx.emit(body, [*consts, *([i] if has_index else []), *args])

    if isinstance(start, int) and length == unroll:
        for i in range(start, start + length):
            carry = run(constant(i, i32), carry)
        return list(carry)
    lower = ensure_value(start, _I32_AVAL) if not isinstance(start, int) \
        else constant(start, i32)
    main = length // unroll * unroll
    main_upper = arith.addi(lower, constant(main, i32))
    if main:
        loop = scf.ForOp(lower, main_upper, constant(unroll, i32), carry)
        with ir.InsertionPoint(loop.body):
            args = list(loop.inner_iter_args)
            for k in range(unroll):
                i = loop.induction_variable if k == 0 else \
                    arith.addi(loop.induction_variable, constant(k, i32))
                args = run(i, args)
            scf.YieldOp(args)
        carry = list(loop.results)
    for k in range(length - main):
        carry = run(arith.addi(lower, constant(main + k, i32)), carry)
    return list(carry)


def _while_as_fori(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    """JAX's ``pattern_match_while_to_fori_loop``: ``while i < n: ...; i += 1`` with ``n``
    carried unchanged is a counted loop over the body without the increment (None if the
    loop is not of that form)."""
    cond, body = cond_jaxpr.jaxpr, body_jaxpr.jaxpr
    if cond_nconsts or len(cond.invars) < 2 or len(cond.eqns) != 1:
        return None
    for a in (cond.invars[0].aval, cond.invars[1].aval):
        if a.shape or np.dtype(a.dtype) not in (np.int32, np.int64):
            return None
    eqn = cond.eqns[0]
    if (eqn.primitive.name != "lt" or eqn.outvars[0] is not cond.outvars[0]
            or list(eqn.invars) != cond.invars[:2]):
        return None
    v1, v2 = body.invars[body_nconsts:body_nconsts + 2]
    vo1, vo2 = body.outvars[:2]
    if v2 is not vo2:
        return None
    for i, e in enumerate(body.eqns):
        if (e.primitive.name == "add" and e.invars[0] is v1 and isinstance(e.invars[1], Literal)
                and e.invars[1].val == 1 and e.outvars[0] is vo1):
            return Jaxpr(body.constvars,
                         [*body.invars[:body_nconsts], v1, *body.invars[body_nconsts + 2:]],
                         body.outvars[2:], body.eqns[:i] + body.eqns[i + 1:])
    return None


def _counted_loop(ctx, body, lower, steps, consts, carry):
    """JAX's ``_lower_jaxpr_to_for_loop`` with ``unroll=1`` and a dynamic step count: a main
    ``scf.for`` and a remainder one (empty when ``unroll`` is 1, emitted as JAX emits it)."""
    i32 = ir.IntegerType.get_signless(32)
    upper = arith.addi(lower, steps)
    unroll = constant(1, i32)
    main_upper = arith.addi(lower, arith.muli(arith.divsi(steps, unroll), unroll))
    for lo, hi in ((lower, main_upper), (main_upper, upper)):
        loop = scf.ForOp(lo, hi, constant(1, i32), carry)
        with ir.InsertionPoint(loop.body):
            scf.YieldOp(ctx.emit(body, [*consts, loop.induction_variable,
                                        *loop.inner_iter_args]))
        carry = list(loop.results)
    return carry


@register("while")
def _while(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, **_):
    avals = ctx.avals_in
    values = [ensure_value(a, v) for a, v in zip(args, avals)]
    cond_consts = values[:cond_nconsts]
    body_consts = values[cond_nconsts:cond_nconsts + body_nconsts]
    carry = values[cond_nconsts + body_nconsts:]
    fori = _while_as_fori(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts)
    if fori is not None:
        lower, upper = carry[:2]
        out = _counted_loop(ctx, fori, lower, arith.subi(upper, lower), body_consts,
                            carry[2:])
        return [upper, upper, *out]
    types = [c.type for c in carry]
    loop = scf.WhileOp(types, carry)
    before = loop.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        (pred,) = ctx.emit(cond_jaxpr.jaxpr, [*cond_consts, *before.arguments])
        scf.ConditionOp(pred, list(before.arguments))
    after = loop.after.blocks.append(*types)
    with ir.InsertionPoint(after):
        scf.YieldOp(ctx.emit(body_jaxpr.jaxpr, [*body_consts, *after.arguments]))
    return list(loop.results)


@register("custom_jvp_call", "custom_vjp_call")
def _custom_call(ctx, *args, call_jaxpr, num_consts=0, symbolic_zeros=False, **_):
    if symbolic_zeros:
        raise NotImplementedError("custom derivatives with symbolic_zeros=True")
    if num_consts or getattr(call_jaxpr, "consts", ()):
        raise NotImplementedError("custom derivatives closing over constants")
    args = [ensure_value(a, v) for a, v in zip(args, ctx.avals_in)]
    return ctx.emit(call_jaxpr.jaxpr, args)
