"""Batching rules of the elementwise primitives, and the vectorized/broadcasting rule factories."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.primitive import ALL_PRIMITIVES
from traxla.ir.rules.elementwise import BINARY, COMPARE, P as E, UNARY
from traxla.batching.batch_trace import bdim_at_front, broadcast_batch, moveaxis, register_batching


def _ndim(x):
    return len(lax.shape_of(x))


# -- elementwise ---------------------------------------------------------------------------

def _vectorized(prim):
    """The output keeps the operand's leading dims, so the batch dim stays where it is."""
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
for _name in ("convert_element_type", "to_edtype", "from_edtype"):
    register_batching(E[_name], _vectorized(E[_name]))


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

