"""``scan`` and ``cond`` over high-level (hijax) values: they run on their arrays.

A carry, an ``xs`` or a ``ys`` of an immutable high-level type (``HiType``) is passed
through the loop as its ``lo_ty`` arrays, as JAX's ``scan_p.to_lojax`` does: the body is
traced in a trace that lowers as it goes (hijax primitives run their ``expand``), each
high-level value taken apart with ``lower_val`` and rebuilt with ``raise_val``; the
stacked ``ys`` of a high-level type are rebuilt from the stacked arrays; a ``cond``'s
operands and results likewise. This runs where a value can be lowered: eagerly, or while
a staged jaxpr is being lowered (``traxla/api/hi_lowering.py``: a hijax primitive's
``expand``); inside a ``jit`` trace it is refused (JAX stages such a ``scan``). A body or branch whose
high-level values are all made and used inside is the same function of arrays
(``lowered_body``), in any trace."""
from __future__ import annotations

from traxla import tree_util
from traxla.api.device_arrays import typeof
from traxla.api.hi_lowering import is_high, jaxpr_is_high, lower_closed, lower_vals, raise_vals
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.tracer.eval import EvalTrace
from traxla.tracer.traces import Tracer, current_trace
from traxla.tracer.values import hitype_avals


def has_hi(leaves) -> bool:
    return bool(hitype_avals) and any(
        type(x) in hitype_avals or (isinstance(x, Tracer) and is_high(x.aval)) for x in leaves)


def _check_lowerable(what, leaves):
    trace = current_trace()
    if not (isinstance(trace, EvalTrace) or trace.requires_low) or any(
            isinstance(x, Tracer) and is_high(x.aval) for x in leaves):
        raise NotImplementedError(
            f"lax.{what} with high-level (hijax) values inside a staged or transformed "
            f"function: traxla runs such a {what} eagerly (or in a hijax primitive's expand)")


class _Lowered:
    """``f`` as a function of arrays: its arguments raised from them, its results (whose
    types and tree it records) lowered, traced where hijax primitives expand."""

    def __init__(self, f, in_avals, in_tree):
        self.f, self.in_avals, self.in_tree = f, in_avals, in_tree
        self.out_avals = self.out_tree = None

    def __call__(self, *lo):
        inner = current_trace()
        previous, inner.requires_low = inner.requires_low, True
        try:
            args = tree_util.tree_unflatten(self.in_tree, raise_vals(self.in_avals, lo))
            out_leaves, self.out_tree = tree_util.tree_flatten(self.f(*args))
            self.out_avals = [typeof(v) for v in out_leaves]
            return lower_vals(self.out_avals, out_leaves)
        finally:
            inner.requires_low = previous

    def raise_results(self, lo_outs):
        return tree_util.tree_unflatten(self.out_tree, raise_vals(self.out_avals, lo_outs))


def lowered_cond(cond, pred, true_fun, false_fun, operands):
    leaves, tree = tree_util.tree_flatten(operands)
    _check_lowerable("cond", leaves)
    avals = [typeof(x) for x in leaves]
    t, f = _Lowered(true_fun, avals, tree), _Lowered(false_fun, avals, tree)
    lo_outs = cond(pred, t, f, *lower_vals(avals, leaves))
    return t.raise_results(tree_util.tree_leaves(lo_outs))


def lowered_scan(scan, f, init, xs, length, reverse, unroll):
    init_leaves, init_tree = tree_util.tree_flatten(init)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    _check_lowerable("scan", init_leaves + x_leaves)
    init_avals = [typeof(x) for x in init_leaves]
    x_avals = [typeof(x) for x in x_leaves]
    out = {}

    def body(lo_carry, lo_x):
        inner = current_trace()
        previous, inner.requires_low = inner.requires_low, True
        try:
            carry = tree_util.tree_unflatten(init_tree, raise_vals(init_avals, lo_carry))
            x = tree_util.tree_unflatten(x_tree, raise_vals(x_avals, lo_x))
            new_carry, y = f(carry, x)
            c_leaves, out["c_tree"] = tree_util.tree_flatten(new_carry)
            y_leaves, out["y_tree"] = tree_util.tree_flatten(y)
            out["c_avals"] = [typeof(v) for v in c_leaves]
            out["y_avals"] = [typeof(v) for v in y_leaves]
            return (lower_vals(out["c_avals"], c_leaves), lower_vals(out["y_avals"], y_leaves))
        finally:
            inner.requires_low = previous

    lo_carry, lo_ys = scan(body, lower_vals(init_avals, init_leaves),
                           lower_vals(x_avals, x_leaves), length=length, reverse=reverse,
                           unroll=unroll)
    carry = tree_util.tree_unflatten(out["c_tree"], raise_vals(out["c_avals"], lo_carry))
    # a stacked y of a high-level type: its type's value of the stacked arrays
    ys = tree_util.tree_unflatten(out["y_tree"], raise_vals(out["y_avals"], lo_ys))
    return carry, ys


def lowered_body(closed, consts, out_tree):
    """A loop body's or branch's ``(closed jaxpr, consts, out tree)`` (its leading invars
    the consts) whose high-level values are all made and used inside: the same function
    of arrays (any constants of the lowering lead the consts)."""
    if not jaxpr_is_high(closed) or any(is_high(a) for a in (*closed.in_avals,
                                                              *closed.out_avals)):
        return closed, consts, out_tree
    low = lower_closed(closed)
    j = low.jaxpr
    lifted = Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns,
                   closed.jaxpr.debug_info)
    return ClosedJaxpr(lifted, []), list(low.consts) + list(consts), out_tree
