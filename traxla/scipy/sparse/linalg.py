"""``traxla.scipy.sparse.linalg``: the Krylov solvers of ``jax.scipy.sparse.linalg``
(``cg``, ``bicgstab``, ``gmres``). ``A`` and ``M`` are matrices, functions or
``__matmul__`` objects acting on pytrees of arrays; each solve is wrapped in
``lax.custom_linear_solve`` so derivatives come from implicit differentiation (another
solve with the transposed operator), not from differentiating the iterations. ``info``
is ``None`` for ``cg``/``bicgstab`` and ``-1``/``0`` (NaN solution or not) for ``gmres``,
as in JAX."""
from __future__ import annotations

from functools import partial

from traxla import dtypes, lax, numpy as jnp
from traxla.api import device_put
from traxla.tree_util import tree_leaves, tree_map, tree_structure
from traxla.scipy.sparse._gmres import _gmres_batched, _gmres_incremental, _gmres_solve
from traxla.scipy.sparse._tree_ops import (_add, _identity, _mul, _norm,
                        _normalize_matvec, _shapes, _sub, _vdot_real_tree, _vdot_tree)

__all__ = ["bicgstab", "cg", "gmres"]


def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    # SciPy's "non-legacy" tolerance: norm(r) <= max(tol * norm(b), atol)
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    initial_value = (x0, r0, gamma0, p0, 0)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, initial_value)
    return x_final


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        x, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        # k < 0 flags a breakdown (rho, omega or alpha became 0)
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(partial(jnp.where, exit_early),
                      _add(x, _mul(alpha_, phat)),
                      _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where((rho_ == 0), -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    dtype, weak_type = dtypes.result_type(*tree_leaves(b), return_weak_type_flag=True)
    rho0 = alpha0 = omega0 = lax._lift(lax._convert_element_type(1, dtype, weak_type))
    initial_value = (x0, r0, r0, alpha0, omega0, rho0, r0, r0, 0)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, initial_value)
    return x_final


def _check_x0(x0, b):
    if tree_structure(x0) != tree_structure(b):
        raise ValueError('x0 and b must have matching tree structure: '
                         f'{tree_structure(x0)} vs {tree_structure(b)}')


def _isolve(_isolve_solve, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None,
            check_symmetric=False):
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(bi.size for bi in tree_leaves(b))  # as SciPy
    A = _normalize_matvec(A)
    M = _normalize_matvec(_identity if M is None else M)
    _check_x0(x0, b)
    if _shapes(x0) != _shapes(b):
        raise ValueError('arrays in x0 and b must have matching shapes: '
                         f'{_shapes(x0)} vs {_shapes(b)}')

    isolve_solve = partial(_isolve_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # a real positive-definite operator is symmetric; a complex one need not be
    symmetric = check_symmetric and all(
        not jnp.issubdtype(leaf.dtype, jnp.complexfloating) for leaf in tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=isolve_solve, transpose_solve=isolve_solve,
                                symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for Hermitian positive-definite ``A`` by (preconditioned)
    conjugate gradients; returns ``(x, None)``. ``A`` and ``M`` (which approximates
    ``A``'s inverse) are matrices or functions on ``b``'s pytree; stops when
    ``norm(residual) <= max(tol * norm(b), atol)`` or after ``maxiter`` steps
    (default ``10 * size``)."""
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                   check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for a general ``A`` by bi-conjugate gradients stabilized;
    returns ``(x, None)``. Arguments as for ``cg``."""
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter,
                   M=M)


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method='batched'):
    """Solves ``A x = b`` by restarted GMRES; returns ``(x, info)`` with ``info`` -1 when
    ``x`` is NaN, else 0. ``restart`` is the Krylov subspace size (at most ``b``'s size),
    ``maxiter`` the number of restarts (default ``10 * size``); ``solve_method``
    'batched' solves one least-squares problem per restart, 'incremental' builds the QR
    factorization with Givens rotations and can stop within a restart."""
    if x0 is None:
        x0 = tree_map(jnp.zeros_like, b)
    M = _normalize_matvec(_identity if M is None else M)
    A = _normalize_matvec(A)
    b, x0 = device_put((b, x0))
    size = sum(bi.size for bi in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # as SciPy
    restart = min(restart, size)
    _check_x0(x0, b)

    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    Mb_norm = _norm(M(b))
    ptol = Mb_norm * jnp.minimum(1.0, atol / b_norm)

    if solve_method == 'incremental':
        gmres_func = _gmres_incremental
    elif solve_method == 'batched':
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")

    def _solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)
    x = lax.custom_linear_solve(A, b, solve=_solve, transpose_solve=_solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
