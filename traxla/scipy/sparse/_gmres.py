"""GMRES for ``traxla.scipy.sparse.linalg.gmres`` (JAX's restarted GMRES: an Arnoldi
process with iterated classical Gram-Schmidt, solved either incrementally with Givens
rotations or in one batched least-squares solve per restart)."""
from __future__ import annotations

import operator

from traxla import dtypes, lax, numpy as jnp
from traxla.scipy import linalg as jsp_linalg
from traxla.tree_util import tree_leaves, tree_map, tree_reduce
from traxla.scipy.sparse._tree_ops import _add, _dot, _einsum, _norm, _sub


def _safe_normalize(x, thresh=None):
    """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is not above ``thresh``
    (the machine epsilon of ``x``'s dtype by default)."""
    norm = _norm(x)
    dtype, weak_type = dtypes.result_type(*tree_leaves(x), return_weak_type_flag=True)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = lax._lift(lax._convert_element_type(norm, dtype, weak_type))
    normalized_x = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    norm = jnp.where(use_norm, norm, 0.0)
    return normalized_x, norm


def _project_on_columns(A, v):
    """``A.T.conj() @ v`` for pytrees whose leaves carry the columns on the last axis."""
    v_proj = tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), A, v)
    return tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q, x, xnorm, max_iterations=2):
    """Orthogonalizes ``x`` against the orthonormal columns of ``Q`` ("twice is enough":
    repeated while the remainder lost more than 1/sqrt(2) of the norm). Returns the new
    vector and its overlaps with ``Q``'s columns."""
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    q = x
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_map(lambda X: _dot(X, h), Q)
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry):
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry):
            k, _, q, qnorm_scaled = carry
            _, qnorm = _safe_normalize(q)
            qnorm_scaled = qnorm / jnp.sqrt(2.0)
            return (k, False, q, qnorm_scaled)

        init = (k, True, q, qnorm_scaled)
        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, init)
        return (k + 1, q, r, qnorm_scaled)

    def cond_function(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, q, r, xnorm_scaled))
    k, q, r, _ = lax.while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k, A, M, V, H):
    """The k'th Arnoldi step: the orthonormalized ``M(A(V[:, k]))`` becomes ``V[:, k+1]``
    and its overlaps row ``H[k, :]``; a vector below ``eps * norm`` (an invariant
    subspace) is taken as zero and reported as breakdown."""
    dtype, _ = dtypes.result_type(*tree_leaves(V), return_weak_type_flag=True)
    eps = dtypes.finfo(dtype).eps

    v = tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)

    tol = eps * v_norm_0
    unit_v, v_norm_1 = _safe_normalize(v, thresh=tol)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)

    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    breakdown = v_norm_1 == 0.
    return V, H, breakdown


def _rotate_vectors(H, i, cs, sn):
    x1 = H[i]
    y1 = H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    H = H.at[i].set(x2)
    H = H.at[i + 1].set(y2)
    return H


def _givens_rotation(a, b):
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row, givens, k):
    """Applies the stored rotations ``givens[:k]`` to ``H_row``, then a new one that
    eliminates its element ``k + 1``."""
    def apply_ith_rotation(i, H_row):
        return _rotate_vectors(H_row, i, *givens[i, :])
    R_row = lax.fori_loop(0, k, apply_ith_rotation, H_row)

    givens_factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(givens_factors)
    R_row = _rotate_vectors(R_row, k, *givens_factors)
    return R_row, givens


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES building the Krylov basis's QR factorization as it goes,
    which gives the residual norm for free and stops early below ``ptol``."""
    V = tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
        unit_residual)
    dtype = dtypes.result_type(*tree_leaves(b))
    # eye() keeps R nonsingular if the loop stops early
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros((restart + 1), dtype=dtype)
    beta_vec = beta_vec.at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry):
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry):
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        err = abs(beta_vec[k + 1])
        return k + 1, err, V, R, beta_vec, givens

    carry = (0, residual_norm, V, R, beta_vec, givens)
    carry = lax.while_loop(loop_cond, arnoldi_qr_step, carry)
    _, residual_norm, V, R, beta_vec, _ = carry

    y = jsp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a, b):
    # the normal equations: cheaper than scipy.linalg.lstsq for these small systems
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return jsp_linalg.solve(a2, b2, assume_a='pos')


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES: the whole Arnoldi process, then one dense least-squares
    solve (no early stop within the restart, less overhead on accelerators)."""
    del ptol
    V = tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
        unit_residual)
    dtype, weak_type = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    H = lax._lift(lax._convert_element_type(
        jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type))

    def loop_cond(carry):
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry):
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    carry = (V, H, False, 0)
    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, carry)

    beta_vec = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(
        residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    dx = tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func):
    """The solve ``custom_linear_solve`` wraps: restarts ``gmres_func`` from the last
    projection until ``norm(M(b - A x)) <= atol`` or ``maxiter`` restarts."""
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value):
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(
            A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    initialization = (x0, 0, unit_residual, residual_norm)
    x_final, _, _, _ = lax.while_loop(cond_fun, body_fun, initialization)
    return x_final
