"""Batching rules, by family. Each rule receives the batch size, the operand
values (in the enclosing trace) and their batch dims (None: unbatched) and
returns the outputs and their batch dims, choosing dims as JAX does so that
vmapped jaxprs print the same."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir.rules.ad import empty2_p
from ..ir.rules.call import jit_p
from ..ir.rules.elementwise import BINARY, COMPARE, UNARY, P as E
from ..ir.rules.reduction import P as R, REDUCTIONS, dot_general_p
from ..ir.rules import shape as S
from ..ir.primitive import ALL_PRIMITIVES
from .core import (batch_jaxpr, bdim_at_front, broadcast_batch, moveaxis, natural,
                   register_batching)


def _ndim(x):
    return len(lax.shape_of(x))


# -- elementwise ---------------------------------------------------------------------------

def _vectorized(prim):
    def rule(size, vals, dims, **params):
        return prim.bind(vals[0], **params), dims[0]
    return rule


def _expand_trailing(x, d, ndim):
    if d is None or _ndim(x) == ndim:
        return x
    return lax.expand_dims(x, tuple(range(_ndim(x), ndim)))


def add_any_batched(size, vals, dims):
    """JAX's ``add_batched`` for ``add_any``, whose operands must have equal shapes
    (no size-1 broadcasting): an unbatched operand is broadcast to the full size at
    the other's batch dim, or the batch dims are aligned."""
    (x, y), (dx, dy) = vals, dims
    prim = ALL_PRIMITIVES["add_any"]
    if dx == dy:
        return prim.bind(x, y), dx
    if dx is None:
        return prim.bind(broadcast_batch(x, size, dy), y), dy
    if dy is None:
        return prim.bind(x, broadcast_batch(y, size, dx)), dx
    return prim.bind(moveaxis(x, dx, dy), y), dy


def _broadcasting(prim):
    """Operands with built-in (scalar / size-1) broadcasting: align batch dims at the front."""
    if prim.name == "add_any":  # autodiff registers add_any with this factory; it cannot broadcast
        return add_any_batched

    def rule(size, vals, dims, **params):
        shape, dim = next((lax.shape_of(x), d) for x, d in zip(vals, dims) if d is not None)
        if all(lax.shape_of(x) == shape and d == dim for x, d in zip(vals, dims) if _ndim(x)):
            return prim.bind(*vals, **params), dim
        vals = [bdim_at_front(x, d, 1) if _ndim(x) else x for x, d in zip(vals, dims)]
        ndim = max(_ndim(x) for x in vals)
        vals = [_expand_trailing(x, d, ndim) for x, d in zip(vals, dims)]
        return prim.bind(*vals, **params), 0
    return rule


for _name in UNARY:
    register_batching(E[_name], _vectorized(E[_name]))
for _name in list(BINARY) + list(COMPARE):
    register_batching(E[_name], _broadcasting(E[_name]))
register_batching(E["convert_element_type"], _vectorized(E["convert_element_type"]))


def _select_n(size, vals, dims):
    which, *cases = vals
    wd, *cds = dims
    if all(wd == d for d in cds):
        if lax.shape_of(which) == lax.shape_of(cases[0]):
            return lax.select_n(which, *cases), wd
        which = lax.broadcast_in_dim(which, lax.shape_of(cases[0]), (wd,))
        return lax.select_n(which, *cases), wd
    if not lax.shape_of(which) and all(d is not None for d in cds):
        if all(cds[0] == d for d in cds[1:]):
            return lax.select_n(which, *cases), cds[0]
        if all(lax.shape_of(cases[0]) == lax.shape_of(c) for c in cases):
                return lax.select_n(which, cases[0], *[moveaxis(c, d, cds[0]) for c, d in
                                                   zip(cases[1:], cds[1:])]), cds[0]
    which = bdim_at_front(which, wd, size) if lax.shape_of(which) else which
    if not all(lax.shape_of(c) == () for c in cases):
        cases = [bdim_at_front(c, d, size) for c, d in zip(cases, cds)]
    if 0 < _ndim(which) < _ndim(cases[0]):
        which = lax.broadcast_in_dim(which, lax.shape_of(cases[0]), (0,))
    if _ndim(which) > _ndim(cases[0]):
        cases = [lax.broadcast(c, lax.shape_of(which)) for c in cases]
    return lax.select_n(which, *cases), 0


def _clamp(size, vals, dims):
    lo, x, hi = vals
    ld, xd, hd = dims
    if ld == xd == hd:
        if lax.shape_of(lo) == lax.shape_of(x) == lax.shape_of(hi) or _ndim(lo) == _ndim(hi) == 0:
            return lax.clamp(lo, x, hi), xd
        if _ndim(lo) == _ndim(hi) == 1:
            lo = lax.broadcast_in_dim(lo, lax.shape_of(x), (ld,))
            hi = lax.broadcast_in_dim(hi, lax.shape_of(x), (hd,))
            return lax.clamp(lo, x, hi), xd
    elif _ndim(lo) == 0 and _ndim(hi) == 0 and xd is not None:
        return lax.clamp(lo, x, hi), xd
    # JAX's order (lo, hi, x to the front; then scalars, then vectors broadcast)
    lo = bdim_at_front(lo, ld, size) if lax.shape_of(lo) else lo
    hi = bdim_at_front(hi, hd, size) if lax.shape_of(hi) else hi
    x = bdim_at_front(x, xd, size) if lax.shape_of(x) else x
    if _ndim(lo) == 0 and _ndim(x) > 0:
        lo = lax.broadcast(lo, lax.shape_of(x))
    if _ndim(hi) == 0 and _ndim(x) > 0:
        hi = lax.broadcast(hi, lax.shape_of(x))
    if 0 < _ndim(lo) < _ndim(x):
        lo = lax.broadcast_in_dim(lo, lax.shape_of(x), (0,))
    if 0 < _ndim(hi) < _ndim(x):
        hi = lax.broadcast_in_dim(hi, lax.shape_of(x), (0,))
    if _ndim(lo) > _ndim(x):
        x = lax.broadcast(x, lax.shape_of(lo))
    return lax.clamp(lo, x, hi), 0


def _bitcast(size, vals, dims, *, new_dtype):
    """Vectorized as in JAX (the batch dim stays put), except that a batch dim in the
    last position moves to the front when the width changes (the last dim is the one
    a width change adds or consumes)."""
    x, d = vals[0], dims[0]
    if d == _ndim(x) - 1 and np.dtype(lax.dtype_of(x)).itemsize != np.dtype(new_dtype).itemsize:
        x, d = moveaxis(x, d, 0), 0
    return E["bitcast_convert_type"].bind(x, new_dtype=new_dtype), d


register_batching(E["bitcast_convert_type"], _bitcast)
register_batching(E["select_n"], _select_n)
register_batching(E["clamp"], _clamp)


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


# -- reductions and contractions -------------------------------------------------------------

def _reducer(prim):
    def rule(size, vals, dims, *, axes, **params):
        x, d = vals[0], dims[0]
        new_axes = tuple(np.where(np.less(axes, d), axes, np.add(axes, 1)))
        out_dim = int(list(np.delete(np.arange(_ndim(x)), new_axes)).index(d))
        return prim.bind(x, axes=new_axes, **params), out_dim
    return rule


for _name in list(REDUCTIONS) + ["argmax", "argmin"]:
    register_batching(R[_name], _reducer(R[_name]))


def _dot_general(size, vals, dims, *, dimension_numbers, precision=None,
                 preferred_element_type=None, out_sharding=None):
    lhs, rhs = vals
    lbd, rbd = dims
    (lc, rc), (lb, rb) = dimension_numbers

    def bump(ds, b):
        return tuple(np.add(ds, np.greater_equal(ds, b)))

    if lbd is not None and rbd is not None:
        lb, rb = (lbd,) + bump(lb, lbd), (rbd,) + bump(rb, rbd)
        lc, rc = bump(lc, lbd), bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        free = [d for d in range(_ndim(lhs)) if d not in lb and d not in lc]
        out_dim = len(lb) + int(np.sum(np.less(free, lbd)))
        lb, lc = bump(lb, lbd), bump(lc, lbd)
    else:
        free = [d for d in range(_ndim(rhs)) if d not in rb and d not in rc]
        out_dim = _ndim(lhs) - len(lc) + int(np.sum(np.less(free, rbd)))
        rb, rc = bump(rb, rbd), bump(rc, rbd)
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                             preferred_element_type=preferred_element_type, out_sharding=None)
    return out, out_dim


register_batching(dot_general_p, _dot_general)


# -- jit: batch the called jaxpr, keep it one equation ---------------------------------------

def _jit(size, vals, dims, *, jaxpr, name):
    # as JAX's jit batcher (batch_jaxpr2): inputs stay where they are batched and
    # outputs keep the dims the inner rules chose
    batched, out_dims = batch_jaxpr(jaxpr, size, dims, [natural] * len(jaxpr.out_avals))
    outs = jit_p.bind(*vals, jaxpr=batched, name=name)
    return outs, out_dims


register_batching(jit_p, _jit)


def _never_batched(prim):
    """Primitives without operands (iota) produce the same value in every lane."""
    def rule(size, vals, dims, **params):
        return prim.bind(*vals, **params), None
    return rule


register_batching(S.iota_p, _never_batched(S.iota_p))



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
