"""Batching rules of the host callbacks, as JAX's: ``debug_print``/``debug_callback``
unroll over the mapped axis (one call per lane, in lane order); ``pure_callback`` follows
its ``vmap_method``; unordered ``io_callback`` runs sequentially (a ``scan``), an ordered
one refuses to be batched."""
from __future__ import annotations

from traxla import lax
from traxla.ir.rules.callbacks import (debug_callback_p, debug_print_p, io_callback_p,
                                       pure_callback_p, check_p)
from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules._util import scan_lanes


def _debug_unrolled(prim):
    def rule(size, vals, dims, **params):
        for i in range(size):
            lane = [x if d is None else lax.index_in_dim(x, i, axis=d, keepdims=False)
                    for x, d in zip(vals, dims)]
            prim.bind(*lane, **params)
        return [], []
    return rule


def _batched_avals(size, result_avals):
    return tuple(a.update(shape=(size,) + tuple(a.shape)) for a in result_avals)


def _sequential(prim, size, vals, dims, unroll, **params):
    """One call per lane inside a ``scan`` over the batched operands (JAX's
    ``vmap_method='sequential'``)."""
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    outs = scan_lanes(lambda *ops: prim.bind(*ops, **params), moved, dims, unroll=unroll)
    return list(outs), [0] * len(outs)


def _pure_callback(size, vals, dims, *, vmap_method, result_avals, **params):
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    batched_avals = _batched_avals(size, result_avals)
    if vmap_method == "legacy_vectorized":
        outs = pure_callback_p.bind(*moved, vmap_method=vmap_method, result_avals=batched_avals,
                                    **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        n = size if vmap_method == "broadcast_all" else 1
        operands = [lax.broadcast(x, (n,)) if d is None else x for x, d in zip(moved, dims)]
        outs = pure_callback_p.bind(*operands, vmap_method=vmap_method,
                                    result_avals=batched_avals, **params)
    elif vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, size, vals, dims,
                           unroll=vmap_method == "sequential_unrolled",
                           vmap_method=vmap_method, result_avals=result_avals, **params)
    else:
        raise NotImplementedError(
            f"vmap is only supported for the {pure_callback_p.name} primitive when vmap_method "
            "is one of 'sequential', 'sequential_unrolled', 'expand_dims', "
            f"'broadcast_all', or 'legacy_vectorized'. Got {vmap_method=}.")
    return list(outs), [0] * len(outs)


def _io_callback(size, vals, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, size, vals, dims, unroll=1, ordered=False, **params)


register_batching(debug_print_p, _debug_unrolled(debug_print_p))
register_batching(debug_callback_p, _debug_unrolled(debug_callback_p))
register_batching(pure_callback_p, _pure_callback)
register_batching(io_callback_p, _io_callback)


def _check(size, vals, dims, **params):
    """An unfunctionalized ``check`` under vmap fails if any lane fails; the message shows
    the first failing lane's values."""
    pred, *payload = [moveaxis(x, d, 0) if d is not None else x for x, d in zip(vals, dims)]
    if dims[0] is None:
        lane, all_ok = 0, pred
    else:
        lane = lax.argmin(lax.convert_element_type(pred, "int32"), 0, "int32")
        all_ok = lax.reduce_and(pred, (0,))
    lanes = [x if d is None else lax.squeeze(lax.dynamic_slice_in_dim(x, lane, 1, 0), (0,))
             for x, d in zip(payload, dims[1:])]
    check_p.bind(all_ok, *lanes, **params)
    return [], []


def _register_check():
    register_batching(check_p, _check)


_register_check()
