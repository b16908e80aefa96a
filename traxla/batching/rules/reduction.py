"""Batching rules of reductions and dot_general."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.reduction import P as R, REDUCTIONS, dot_general_p
from traxla.batching.batch_trace import register_batching
from traxla.batching.rules.elementwise import _ndim


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

