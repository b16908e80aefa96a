"""Batching rules for control flow. A ``cond`` whose predicate is batched becomes
``select_n`` over both (batched) branches, as in JAX; a ``while`` whose predicate
is batched runs until every lane is done; ``scan`` batches consts, carries and xs
(the batch axis of xs and ys sits after the scanned axis)."""
from __future__ import annotations

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p
from traxla.ir.rules.platform import platform_index_p
from traxla.tracer import make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import eval_jaxpr
from traxla.batching.batch_trace import batch_jaxpr, bdim_at_front, matchaxis, moveaxis, register_batching


def _batched_branches(branches, size, in_dims):
    """Batches every branch, with an output batched in all branches if it is in any."""
    out_dims = [None] * len(branches[0].out_avals)
    for _ in range(2):
        results = [batch_jaxpr(b, size, in_dims, out_dims) for b in branches]
        merged = [0 if any(r[1][k] is not None for r in results) else None
                  for k in range(len(out_dims))]
        if merged == out_dims:
            break
        out_dims = merged
    return [r[0] for r in results], out_dims


def _bcast_select(pred, on_true, on_false):
    nd = len(lax.shape_of(pred))
    if nd != len(lax.shape_of(on_true)):
        pred = lax.broadcast_in_dim(pred, lax.shape_of(on_true), tuple(range(nd)))
    return lax.select_n(pred, on_false, on_true)


def _bcast_select_n(which, *cases):
    nd = len(lax.shape_of(which))
    if nd != len(lax.shape_of(cases[0])):
        which = lax.broadcast_in_dim(which, lax.shape_of(cases[0]), tuple(range(nd)))
    return lax.select_n(which, *cases)


def _cond(size, vals, dims, *, branches, **params):
    index, *ops = vals
    index_dim, *op_dims = dims
    if "branches_platforms" in params and index_dim is not None:
        # a platform_dependent cond's index is the platform's: a fresh platform_index
        # replaces a batched one (JAX #29329)
        index = platform_index_p.bind(platforms=params["branches_platforms"])
        index_dim = None
    if index_dim is None:
        ops = [x if d is None else moveaxis(x, d, 0) for x, d in zip(ops, op_dims)]
        op_dims = [None if d is None else 0 for d in op_dims]
        new_branches, out_dims = _batched_branches(branches, size, op_dims)
        return cond_p.bind(index, *ops, branches=tuple(new_branches), **params), out_dims
    index = bdim_at_front(index, index_dim, size)
    ops = [bdim_at_front(x, d, size) for x, d in zip(ops, op_dims)]
    batched = [batch_jaxpr(b, size, [0] * len(ops), [0] * len(b.out_avals))[0] for b in branches]
    branch_outs = []
    for i, jaxpr in enumerate(batched):
        predicate = lax.eq(index, lax._convert_element_type(i, dtypes.int32, False))
        masked = [_bcast_select(predicate, x, lax.stop_gradient(x)) for x in ops]
        branch_outs.append(eval_jaxpr(jaxpr, (), *masked))
    outs = [_bcast_select_n(index, *outs) for outs in zip(*branch_outs)]
    return outs, [0] * len(outs)


register_batching(cond_p, _cond)


def _fixpoint(batch, carry_dims):
    """Carry components batched at the output must be batched at the input too."""
    carry_dims = list(carry_dims)
    while True:
        result = batch(carry_dims)
        out_dims = result[-1]
        new = [0 if (c is not None or o is not None) else None for c, o in zip(carry_dims, out_dims)]
        if new == carry_dims:
            return result, carry_dims
        carry_dims = new


def _while(size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc = cond_nconsts + body_nconsts
    cconsts, bconsts, init = vals[:cond_nconsts], vals[cond_nconsts:nc], vals[nc:]
    cdims, bdims, idims = dims[:cond_nconsts], dims[cond_nconsts:nc], dims[nc:]
    carry_dims = [None if d is None else 0 for d in idims]

    def batch(carry_dims):
        body, out_dims = batch_jaxpr(body_jaxpr, size, list(bdims) + carry_dims,
                                     [None if d is None else 0 for d in carry_dims])
        cond, pred_dims = batch_jaxpr(cond_jaxpr, size, list(cdims) + carry_dims, [None])
        return body, cond, pred_dims, out_dims

    (body, cond, pred_dims, _), carry_dims = _fixpoint(batch, carry_dims)
    if pred_dims[0] is not None:
        carry_dims = [0] * len(init)
        body, _ = batch_jaxpr(body_jaxpr, size, list(bdims) + carry_dims, carry_dims)
        cond, _ = batch_jaxpr(cond_jaxpr, size, list(cdims) + carry_dims, [0])
    init = [matchaxis(x, d, t, size) for x, d, t in zip(init, idims, carry_dims)]
    # A batched predicate stays batched in the cond jaxpr (bool[n]); the lowering runs the
    # loop while any lane is live and keeps finished lanes, as JAX does.
    outs = while_p.bind(*cconsts, *bconsts, *init, cond_jaxpr=cond, body_jaxpr=body,
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, carry_dims


register_batching(while_p, _while)


def _scan(size, vals, dims, *, jaxpr, length, reverse, unroll, num_consts, num_carry, linear=None,
          _split_transpose=False):
    consts, init, xs = vals[:num_consts], vals[num_consts:num_consts + num_carry], vals[num_consts + num_carry:]
    cdims, idims, xdims = dims[:num_consts], dims[num_consts:num_consts + num_carry], dims[num_consts + num_carry:]
    cdims_in, xdims_in = cdims, xdims
    cdims = [None if d is None else 0 for d in cdims]
    x_slice_dims = [None if d is None else 0 for d in xdims]
    carry_dims = [None if d is None else 0 for d in idims]
    n_ys = len(jaxpr.out_avals) - num_carry

    def batch(carry_dims):
        body, out_dims = batch_jaxpr(jaxpr, size, cdims + carry_dims + x_slice_dims,
                                     carry_dims + [None] * n_ys)
        return body, out_dims[:num_carry]

    (body, _), carry_dims = _fixpoint(batch, carry_dims)
    body, out_dims = batch_jaxpr(jaxpr, size, cdims + carry_dims + x_slice_dims, carry_dims + [None] * n_ys)
    # operands rearranged in JAX's order: consts, then the initial carry, then xs
    consts = [x if d is None else moveaxis(x, d, 0) for x, d in zip(consts, cdims_in)]
    init = [matchaxis(x, d, t, size) for x, d, t in zip(init, idims, carry_dims)]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xdims_in)]
    outs = scan_p.bind(*consts, *init, *xs, jaxpr=body, length=length, reverse=reverse, unroll=unroll,
                       num_consts=num_consts, num_carry=num_carry, linear=linear,
                       _split_transpose=_split_transpose)
    y_dims = [None if d is None else 1 for d in out_dims[num_carry:]]
    return outs, list(carry_dims) + y_dims


register_batching(scan_p, _scan)
