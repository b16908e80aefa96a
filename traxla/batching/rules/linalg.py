"""Batching rules of the linear-algebra primitives. Leading dimensions are batch dimensions
for every one of them, so a vmapped operand's batch axis moves to the front (JAX's
``expand_dims_batcher``); ``triangular_solve`` with an unbatched matrix folds the batch into
the right-hand side's columns instead, as JAX does; ``cholesky_update``, which takes exactly
one matrix, runs once per example in a loop."""
from __future__ import annotations

from ... import lax
from ...ir.rules import linalg as L
from ..core import bdim_at_front, moveaxis, register_batching


def _expand_dims_batcher(prim):
    def rule(size, vals, dims, **params):
        args = [bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        out = prim.bind(*args, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


for _prim in (L.cholesky_p, L.eig_p, L.eigh_p, L.hessenberg_p, L.householder_product_p, L.lu_p,
              L.lu_pivots_to_permutation_p, L.geqrf_p, L.qr_p, L.schur_p, L.svd_p,
              L.tridiagonal_p, L.tridiagonal_solve_p):
    register_batching(_prim, _expand_dims_batcher(_prim))


def _triangular_solve(size, vals, dims, **params):
    a, b = vals
    da, db = dims
    if da is None:
        b_shape = lax.shape_of(b)
        if params["left_side"]:
            b = moveaxis(b, db, len(b_shape) - 1)
            shape = lax.shape_of(b)
            flat = lax.reshape(b, shape[:-2] + (shape[-2] * shape[-1],))
            out_dim = len(shape) - 1
        else:
            b = moveaxis(b, db, len(b_shape) - 2)
            shape = lax.shape_of(b)
            flat = lax.reshape(b, shape[:-3] + (shape[-3] * shape[-2], shape[-1]))
            out_dim = len(shape) - 2
        out = L.triangular_solve_p.bind(a, flat, **params)
        return lax.reshape(out, shape), out_dim
    a = bdim_at_front(a, da, size)
    b = bdim_at_front(b, db, size)
    return L.triangular_solve_p.bind(a, b, **params), 0


register_batching(L.triangular_solve_p, _triangular_solve)


def _cholesky_update(size, vals, dims):
    r, w = [bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
    outs = [L.cholesky_update_p.bind(lax.index_in_dim(r, i, 0, False),
                                     lax.index_in_dim(w, i, 0, False)) for i in range(size)]
    return lax._stack(outs, 0), 0


register_batching(L.cholesky_update_p, _cholesky_update)
