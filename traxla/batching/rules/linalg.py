"""Batching rules of the linear-algebra primitives. Leading dimensions are batch dimensions
for every one of them, so a vmapped operand's batch axis moves to the front (JAX's
``expand_dims_batcher``); ``triangular_solve`` with an unbatched matrix folds the batch into
the right-hand side's columns instead, as JAX does; ``cholesky_update``, which takes exactly
one matrix, runs once per example in a loop."""
from __future__ import annotations

from traxla import lax
from traxla.ir.rules import linalg as L
from traxla.batching.batch_trace import bdim_at_front, moveaxis, register_batching, batch_jaxpr


def _expand_dims_batcher(prim):
    def rule(size, vals, dims, **params):
        args = [bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
        out = prim.bind(*args, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


for _prim in (L.cholesky_p, L.eig_p, L.eigh_p, L.hessenberg_p, L.householder_product_p, L.lu_p,
              L.lu_pivots_to_permutation_p, L.geqrf_p, L.qr_p, L.schur_p, L.svd_p,
              L.tridiagonal_p, L.tridiagonal_solve_p, L.ormqr_p, L.geqp3_p,
              L.symmetric_product_p):
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


def _custom_linear_solve(size, vals, dims, *, const_lengths, jaxprs):
    """JAX's fixed point: which right-hand sides and solutions must be batched so that the
    four functions agree; each jaxpr batched once per (jaxpr, batched inputs, forced
    outputs), so that functions that were one jaxpr stay one (and print as one)."""
    memo: dict = {}

    def batch(jaxpr, in_bat, instantiate):
        key = (id(jaxpr), tuple(in_bat), tuple(instantiate))
        if key not in memo:
            new, out_dims = batch_jaxpr(jaxpr, size, [0 if b else None for b in in_bat],
                                        [0 if i else None for i in instantiate])
            memo[key] = (new, [d is not None for d in out_dims])
        return memo[key]

    params, b = L.split_linear_solve_args(vals, const_lengths)
    params_dims, b_dims = L.split_linear_solve_args(dims, const_lengths)
    params_bat = L.LinearSolveTuple(*[[d is not None for d in ds] for ds in params_dims])
    orig_b_bat = [d is not None for d in b_dims]
    matvec, vecmat, solve, solve_t = jaxprs
    n_op_out = len(matvec.out_avals)
    n_aux = len(solve.out_avals) - n_op_out
    b_bat = orig_b_bat
    x_bat = [False] * len(solve.out_avals)
    for _ in range(1 + len(orig_b_bat) + len(solve.out_avals)):
        solve_b, solve_x_bat = batch(solve, params_bat.solve + b_bat, x_bat)
        if vecmat is None:
            vecmat_b, x_bat_out = None, solve_x_bat
        else:
            vecmat_b, vecmat_x_bat = batch(vecmat, params_bat.vecmat + b_bat, b_bat)
            x_bat_out = [p or q for p, q in zip(vecmat_x_bat + [True] * n_aux, solve_x_bat)]
        x_bat_noaux = x_bat_out[:n_op_out]
        matvec_b, matvec_b_bat = batch(matvec, params_bat.matvec + x_bat_noaux, b_bat)
        if solve_t is None:
            solve_t_b = None
            b_bat_out = [p or q for p, q in zip(matvec_b_bat, orig_b_bat)]
        else:
            solve_t_b, solve_t_bat = batch(solve_t, params_bat.transpose_solve + x_bat_noaux,
                                           x_bat_out)
            b_bat_out = [m or t or o for m, t, o in zip(matvec_b_bat, solve_t_bat[:len(orig_b_bat)],
                                                      orig_b_bat)]
        if x_bat_out == x_bat and b_bat_out == b_bat:
            break
        x_bat, b_bat = x_bat_out, b_bat_out
    else:
        raise AssertionError("custom_linear_solve batching: no fixed point")
    flat_params = [p for ps in params for p in ps]
    flat_dims = [d for ds in params_dims for d in ds]
    new_params = [x if d is None or d == 0 else moveaxis(x, d, 0)
                  for x, d in zip(flat_params, flat_dims)]
    new_b = []
    for x, d, was, now in zip(b, b_dims, orig_b_bat, b_bat):
        if now and not was:
            x = bdim_at_front(x, None, size)
        elif now and d != 0:
            x = moveaxis(x, d, 0)
        new_b.append(x)
    outs = L.custom_linear_solve_p.bind(
        *new_params, *new_b, const_lengths=const_lengths,
        jaxprs=L.LinearSolveTuple(matvec_b, vecmat_b, solve_b, solve_t_b))
    return outs, [0 if bat else None for bat in solve_x_bat]


register_batching(L.custom_linear_solve_p, _custom_linear_solve)
