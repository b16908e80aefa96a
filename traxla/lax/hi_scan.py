"""``scan`` over high-level (hijax) values: the loop runs on their arrays.

A carry, an ``xs`` or a ``ys`` of an immutable high-level type (``HiType``) is passed
through the loop as its ``lo_ty`` arrays, as JAX's ``scan_p.to_lojax`` does: the body is
traced in a trace that lowers as it goes (hijax primitives run their ``expand``), each
high-level value taken apart with ``lower_val`` and rebuilt with ``raise_val``; the
stacked ``ys`` of a high-level type are rebuilt from the stacked arrays. This runs where a
value can be lowered: eagerly, or while a staged jaxpr is being lowered
(``traxla/api/hi_lowering.py``)."""
from __future__ import annotations

from traxla import tree_util
from traxla.api.device_arrays import typeof
from traxla.api.hi_lowering import is_high, lower_vals, raise_vals
from traxla.tracer.eval import EvalTrace
from traxla.tracer.traces import Tracer, current_trace
from traxla.tracer.values import hitype_avals


def has_hi(leaves) -> bool:
    return bool(hitype_avals) and any(
        type(x) in hitype_avals or (isinstance(x, Tracer) and is_high(x.aval)) for x in leaves)


def lowered_scan(scan, f, init, xs, length, reverse, unroll):
    trace = current_trace()
    init_leaves, init_tree = tree_util.tree_flatten(init)
    x_leaves, x_tree = tree_util.tree_flatten(xs)
    if not (isinstance(trace, EvalTrace) or trace.requires_low) or any(
            isinstance(x, Tracer) and is_high(x.aval) for x in init_leaves + x_leaves):
        raise NotImplementedError(
            "lax.scan with high-level (hijax) values inside a staged or transformed "
            "function: traxla runs such a scan eagerly, or inside a jit that lowers it")
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
