"""Batching rules of the shape primitives."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.rules import shape as S
from traxla.ir.rules.ad import empty2_p
from traxla.batching.batch_trace import moveaxis, register_batching, rules_for_unbatched


# -- shapes --------------------------------------------------------------------------------

def _broadcast_in_dim(size, vals, dims, *, shape, broadcast_dimensions, sharding=None):
    x = moveaxis(vals[0], dims[0], 0)
    new_dims = (0,) + tuple(np.add(1, broadcast_dimensions))
    return lax.broadcast_in_dim(x, (size,) + tuple(shape), new_dims), 0


def _reshape(size, vals, dims, *, new_sizes, dimensions, sharding=None):
    x = moveaxis(vals[0], dims[0], 0)
    if dimensions is not None:
        dimensions = (0,) + tuple(np.add(1, dimensions))
    return lax.reshape(x, (size,) + tuple(new_sizes), dimensions), 0


def _squeeze(size, vals, dims, *, dimensions):
    x = moveaxis(vals[0], dims[0], 0)
    return S.squeeze_p.bind(x, dimensions=tuple(int(d) + 1 for d in dimensions)), 0


def _transpose(size, vals, dims, *, permutation):
    d = dims[0]
    perm = (d,) + tuple(i if i < d else i + 1 for i in permutation)
    return lax.transpose(vals[0], perm), 0


def _rev(size, vals, dims, *, dimensions):
    d = dims[0]
    return lax.rev(vals[0], tuple(i + 1 if i >= d else i for i in dimensions)), d


def _concatenate(size, vals, dims, *, dimension):
    ops = [moveaxis(x, d, 0) if d is not None else lax.broadcast(x, (size,))
           for x, d in zip(vals, dims)]
    return lax.concatenate(ops, dimension + 1), 0


def _pad(size, vals, dims, *, padding_config):
    x, pv = vals
    xd, pd = dims
    if xd is None:
        xd = 0
        x = lax.broadcast(x, (size,))
    config = list(padding_config)
    config.insert(xd, (0, 0, 0))
    if pd is None:
        return lax.pad(x, pv, config), xd
    padded = lax.pad(x, lax._zero(x), config)
    mask = lax.pad(lax.full_like(x, True, np.bool_), False, config)
    fill = lax.broadcast_in_dim(pv, lax.shape_of(padded), (xd,))
    return lax.select(mask, padded, fill), xd


def _slice(size, vals, dims, *, start_indices, limit_indices, strides):
    d = dims[0]
    start, limit = list(start_indices), list(limit_indices)
    start.insert(d, 0)
    limit.insert(d, size)
    st = None if strides is None else tuple(strides[:d]) + (1,) + tuple(strides[d:])
    return lax.slice(vals[0], start, limit, st), d


# dynamic_slice and dynamic_update_slice batch into gather / scatter: see indexing.py


for _prim, _rule in [(S.broadcast_in_dim_p, _broadcast_in_dim), (S.reshape_p, _reshape),
                     (S.squeeze_p, _squeeze), (S.transpose_p, _transpose), (S.rev_p, _rev),
                     (S.concatenate_p, _concatenate), (S.pad_p, _pad), (S.slice_p, _slice)]:
    register_batching(_prim, _rule)

def _never_batched(prim):
    """Primitives without operands (iota) produce the same value in every lane."""
    def rule(size, vals, dims, **params):
        return prim.bind(*vals, **params), None
    return rule


register_batching(S.iota_p, _never_batched(S.iota_p))


def _empty(size, vals, dims, *, shape, dtype, out_sharding):
    """JAX's rule: an empty array with the batch axis in front (no operands to follow)."""
    return S.empty_p.bind(shape=(size, *shape), dtype=dtype, out_sharding=out_sharding), 0


register_batching(S.empty_p, _empty)
rules_for_unbatched.add(S.empty_p)  # batched although it has no operands, as JAX



def _stack(size, vals, dims, *, axis):
    bdim = dims[0]
    if bdim is not None and all(d == bdim for d in dims):
        if axis <= bdim:
            return S.stack_p.bind(*vals, axis=axis), bdim + 1
        return S.stack_p.bind(*vals, axis=axis + 1), bdim
    ops = [moveaxis(v, d, 0) if d is not None else lax.broadcast(v, (size,))
           for v, d in zip(vals, dims)]
    return S.stack_p.bind(*ops, axis=axis + 1), 0


def _unstack(size, vals, dims, *, axis):
    x, d = vals[0], dims[0]
    if axis >= d:
        outs = S.unstack_p.bind(x, axis=axis + 1)
        return outs, [d] * len(outs)
    outs = S.unstack_p.bind(x, axis=axis)
    return outs, [d - 1] * len(outs)


def _split(size, vals, dims, *, sizes, axis):
    d = dims[0]
    outs = S.split_p.bind(vals[0], sizes=sizes, axis=axis + 1 if axis >= d else axis)
    return outs, [d] * len(outs)


register_batching(S.stack_p, _stack)
register_batching(S.unstack_p, _unstack)
register_batching(S.split_p, _split)

register_batching(empty2_p, _never_batched(empty2_p))
