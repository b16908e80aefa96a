"""Lowering of control flow: ``cond`` -> ``stablehlo.case``; ``while`` ->
``stablehlo.while`` (constants ride in the loop state); ``scan`` -> a
``stablehlo.while`` over the trip count that slices ``xs`` with dynamic_slice
and writes ``ys`` with dynamic_update_slice, with ``unroll`` steps per trip.

A body or branch with ordered effects threads the module's token: an extra result of the
``case``, an extra loop-carried value of the ``while``."""
from __future__ import annotations

import numpy as np

from traxla.lowering import dynamic_shapes as dyn
from traxla.ir import dtypes
from traxla.ir.effects import has_ordered_effects
from traxla.ir.avals import physical_aval
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
from traxla.lowering.mlir import aval_type, constant, hlo, ir, tensor_type
from traxla.lowering.module import (_OWN_CONSTRAINT, _unreduced_constraint, const_value,
                                    emit_jaxpr)
from traxla.lowering.registry import mark_platform_sensitive, register_lowering
from traxla.lowering.rules.call import call_function
from traxla.lowering.rules.elementwise import compare
from traxla.lowering.rules.platform import _ALIASES as _PLATFORM_ALIASES


def _token_in(module):
    """The token ordered effects continue from (a fresh one if none is being threaded)."""
    if module.token is None:
        module.token = hlo.create_token()
    return module.token


def _platform_branches(ctx, index, branches, branches_platforms):
    """A ``platform_dependent`` cond lowers only the branch of the module's platform (the
    others may not lower there), as JAX does: the index maps to the kept branch."""
    platform = _PLATFORM_ALIASES.get(ctx.module.platform, ctx.module.platform)
    for b, platforms in enumerate(branches_platforms):
        if platforms is None or platform in platforms:
            break
    else:
        raise NotImplementedError(
            f"lax.platform_dependent: the current lowering platform {platform} is not among "
            f"the platforms {[p for p in branches_platforms if p is not None]} and there is "
            "no default branch.")
    i32 = tensor_type((), dtypes.int32)
    kept_index = hlo.CaseOp([i32], index, len(branches))
    for region in kept_index.branches:
        with ir.InsertionPoint(region.blocks.append()):
            hlo.return_([_scalar_i32(0)])
    return kept_index.result, [branches[b]]


def _cond(ctx, index, *ops, branches, branches_platforms=None):
    if branches_platforms is not None:
        index, branches = _platform_branches(ctx, index, branches, branches_platforms)
    module = ctx.module
    ordered = any(has_ordered_effects(b.jaxpr) for b in branches)
    types = [aval_type(a) for a in ctx.avals_out]
    token = _token_in(module) if ordered else None
    case = hlo.CaseOp(([hlo.TokenType.get()] if ordered else []) + types, index, len(branches))
    for region, branch in zip(case.branches, branches):
        block = region.blocks.append()
        with ir.InsertionPoint(block):
            if ordered:
                module.token = token
            outs = emit_jaxpr(module, branch.jaxpr, _consts(branch), list(ops))
            hlo.return_(([module.token] if ordered else []) + list(outs))
    results = list(case.results)
    if ordered:
        module.token, results = results[0], results[1:]
    return results


def _consts(closed):
    return [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]


def _while(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """A batched predicate (from vmap) runs the loop while any lane is live; finished
    lanes keep their carry, as JAX lowers it."""
    module = ctx.module
    ordered = has_ordered_effects(body_jaxpr.jaxpr) or has_ordered_effects(cond_jaxpr.jaxpr)
    token_before = module.token
    types = [aval_type(a) for a in ctx.avals_in]
    if ordered:  # the token rides last in the loop state
        types.append(hlo.TokenType.get())
        args = list(args) + [_token_in(module)]
    loop = hlo.WhileOp(types, list(args))
    nc = cond_nconsts + body_nconsts
    n = len(ctx.avals_in)
    pred_aval = cond_jaxpr.out_avals[0]
    batched = bool(pred_aval.shape)

    def predicate(state):
        pred, = emit_jaxpr(ctx.module, cond_jaxpr.jaxpr, _consts(cond_jaxpr),
                           state[:cond_nconsts] + state[nc:])
        return pred

    cond_block = loop.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        module.token = cond_block.arguments[n] if ordered else None
        pred = predicate(list(cond_block.arguments)[:n])
        if batched:
            pred = _reduce_any(pred, pred_aval)
        hlo.return_([pred])
    body_block = loop.body.blocks.append(*types)
    with ir.InsertionPoint(body_block):
        state = list(body_block.arguments)[:n]
        module.token = body_block.arguments[n] if ordered else None
        new_carry = emit_jaxpr(module, body_jaxpr.jaxpr, _consts(body_jaxpr),
                               state[cond_nconsts:nc] + state[nc:])
        if batched:
            lanes = predicate(state)
            new_carry = [_select_lanes(lanes, pred_aval, new, old, aval)
                         for new, old, aval in zip(new_carry, state[nc:], ctx.avals_in[nc:])]
        hlo.return_(state[:nc] + list(new_carry) + ([module.token] if ordered else []))
    results = list(loop.results)
    module.token = results[n] if ordered else token_before
    return results[nc:n]


def _reduce_any(pred, aval):
    red = hlo.ReduceOp([tensor_type((), dtypes.bool_)], [pred], [constant(np.array(False))],
                       list(range(len(aval.shape))))
    scalar = tensor_type((), dtypes.bool_)
    block = red.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.or_(*block.arguments)])
    return red.result


def _select_lanes(lanes, pred_aval, new, old, aval):
    aval = physical_aval(aval)  # a key carry (key<fry>[n]) selects on its uint32[n, 2] data
    if tuple(aval.shape) != tuple(pred_aval.shape):
        lanes = hlo.broadcast_in_dim(tensor_type(aval.shape, dtypes.bool_), lanes,
                                     list(range(len(pred_aval.shape))))
    return hlo.select(lanes, new, old)


def _scalar_i32(value):
    return constant(np.int32(value))


def _scan(ctx, *args, jaxpr, length, reverse, unroll, num_consts, num_carry, linear=None,
          _split_transpose=False):
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = list(args[num_consts + num_carry:])
    # Key arrays (key<fry>[n, ...]) are sliced and stacked as their uint32[n, ..., 2] data.
    x_avals = [physical_aval(a) for a in ctx.avals_in[num_consts + num_carry:]]
    y_avals = [physical_aval(a) for a in ctx.avals_out[num_carry:]]
    unroll = length if unroll is True else max(int(unroll), 1)
    unroll = min(unroll, max(length, 1))
    blocks, remainder = divmod(length, unroll)
    zero = [constant(np.zeros((), a.dtype), a.dtype) for a in y_avals]
    ys = [dyn.broadcast_in_dim(aval_type(a), z, [], a.shape) for a, z in zip(y_avals, zero)]
    # stacked results unreduced over mesh axes: the buffer and each write stay partial sums
    unreduced = [(a.sharding_type, a) if a.sharding_type is not None and a.sharding_type.spec.unreduced
                 else None for a in ctx.avals_out[num_carry:]]
    ys = [y if u is None else _unreduced_constraint(ctx.module, u[0], y, u[1])
          for y, u in zip(ys, unreduced)]

    def step(i_value, carry, ys, xs_vals):
        """One iteration at step ``i_value`` (an i32 scalar value)."""
        index = i_value
        if reverse:
            index = hlo.subtract(_scalar_i32(length - 1), i_value)
        x_slices = []
        zero_i = _scalar_i32(0) if xs_vals or ys else None  # (no dead constant)
        for x, a in zip(xs_vals, x_avals):
            sizes = [1] + list(a.shape[1:])
            sl = dyn.dynamic_slice(tensor_type(sizes, a.dtype), x,
                                   [index] + [zero_i] * (len(a.shape) - 1), sizes)
            x_slices.append(dyn.reshape(tensor_type(a.shape[1:], a.dtype), sl, a.shape[1:]))
        # each step calls the body as JAX's scan does (``eval_jaxpr_p``: ``@closed_call``)
        outs = call_function(ctx.module, jaxpr, "closed_call", consts_vals + carry + x_slices,
                             jaxpr.out_avals)
        new_carry, new_ys = list(outs[:num_carry]), []
        for buf, y, a, u in zip(ys, outs[num_carry:], y_avals, unreduced):
            y = dyn.reshape(tensor_type((1,) + a.shape[1:], a.dtype), y, (1,) + a.shape[1:])
            if u is not None:  # (the slice of a stacked value: the stack's sharding)
                y = _unreduced_constraint(ctx.module, u[0], y, u[1].update(shape=(1,) + a.shape[1:]))
            new = hlo.dynamic_update_slice(buf, y, [index] + [zero_i] * (len(a.shape) - 1))
            if u is not None:
                new = _unreduced_constraint(ctx.module, u[0], new, u[1])
            new_ys.append(new)
        return new_carry, new_ys

    consts_vals = consts
    module = ctx.module
    ordered = has_ordered_effects(jaxpr.jaxpr)
    if blocks > 0:
        i_type = tensor_type((), dtypes.int32)
        state = [_scalar_i32(0)] + consts + carry + ys + xs
        n = len(state)
        if ordered:  # the token rides last in the loop state
            state.append(_token_in(module))
        types = [v.type for v in state]
        loop = hlo.WhileOp(types, state)
        cond_block = loop.cond.blocks.append(*types)
        with ir.InsertionPoint(cond_block):
            i = cond_block.arguments[0]
            hlo.return_([compare(i, _scalar_i32(blocks), "LT", dtypes.int32)])
        body_block = loop.body.blocks.append(*types)
        token_before = module.token
        with ir.InsertionPoint(body_block):
            args_ = list(body_block.arguments)[:n]
            if ordered:
                module.token = body_block.arguments[n]
            i = args_[0]
            consts_vals = args_[1:1 + num_consts]
            c = args_[1 + num_consts:1 + num_consts + num_carry]
            y = args_[1 + num_consts + num_carry:1 + num_consts + num_carry + len(ys)]
            x = args_[1 + num_consts + num_carry + len(ys):]
            if unroll == 1:  # the step's index is the counter itself, as in JAX's module
                c, y = step(i, c, y, x)
            else:
                base = hlo.multiply(i, _scalar_i32(unroll))
                for u in range(unroll):
                    c, y = step(hlo.add(base, _scalar_i32(u)), c, y, x)
            hlo.return_([hlo.add(i, _scalar_i32(1))] + list(consts_vals) + list(c) + list(y)
                        + list(x) + ([module.token] if ordered else []))
        results = list(loop.results)
        module.token = results[n] if ordered else token_before
        carry = results[1 + num_consts:1 + num_consts + num_carry]
        ys = results[1 + num_consts + num_carry:1 + num_consts + num_carry + len(ys)]
        consts_vals = consts
        del i_type
    for r in range(remainder):
        carry, ys = step(_scalar_i32(blocks * unroll + r), carry, ys, xs)
    out = list(carry) + list(ys)
    if any(a.sharding_type is not None and a.sharding_type.spec.unreduced for a in ctx.avals_out):
        out = _constrain_unreduced(ctx, out)
    return out


def _constrain_unreduced(ctx, values):
    """The results unreduced over mesh axes constrained so, as the loop left them and then
    as JAX's scan reshards them to their type (``_constrain_unreduced``: a constraint
    located at a ``reshard``), so that the partitioner sums no partial sum at the loop's
    boundary and names a later all-reduce after the reshard."""
    here = ir.Location.current
    name = getattr(here, "name_str", None)
    again = (here if name is None else ir.Location.name(
        name.rsplit("/", 1)[0] + "/reshard" if "/" in name else "reshard",
        childLoc=here.child_loc))
    out = []
    for v, a in zip(values, ctx.avals_out):
        st = a.sharding_type
        if st is not None and st.spec.unreduced:
            v = _unreduced_constraint(ctx.module, st, v, a)
            with again:
                v = _unreduced_constraint(ctx.module, st, v, a)
        out.append(v)
    return out


register_lowering(cond_p, _cond)
mark_platform_sensitive(cond_p, lambda eqn: eqn.params.get("branches_platforms") is not None)
register_lowering(while_p, _while)
register_lowering(scan_p, _scan)
_OWN_CONSTRAINT.add(scan_p)  # (its unreduced results: constrained by the rule, as JAX's)
