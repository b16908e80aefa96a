"""QDWH polar decomposition (``jax.lax.linalg.qdwh``): the QR-based dynamically weighted Halley
iteration of Nakatsukasa, Bai and Gygi (SIAM J. Matrix Anal. Appl. 31(5), 2010), with JAX's
coefficients, its switch from QR steps to Cholesky steps, and its convergence test.

Written against ``traxla.numpy`` (imported when called: ``numpy`` sits above ``lax``)."""
from __future__ import annotations

import functools

import numpy as np


def _np():
    from traxla import numpy as jnp
    return jnp


def _mask(x, dims, alternative=0):
    from traxla import lax
    jnp = _np()
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            mask_i = lax.broadcasted_iota(np.int32, x.shape, i) < d
            mask = mask_i if mask is None else mask & mask_i
    return x if mask is None else jnp.where(mask, x, alternative)


def _pad_in_dim(x, high, axis):
    from traxla import lax
    pads = [(0, 0, 0)] * x.ndim
    pads[axis] = (0, high, 0)
    return lax.pad(x, np.zeros((), x.dtype), pads)


def _dynamic_concat(a, b, m, axis=0):
    from traxla import lax
    if m is None:
        return _np().concatenate([a, b], axis=axis)
    return lax.dynamic_update_slice_in_dim(_pad_in_dim(a, b.shape[axis], axis), b, m, axis)


def _use_qr(u, m, n, params):
    from traxla import lax
    from traxla.lax import linalg as lax_linalg
    jnp = _np()
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    big_m, big_n = u.shape
    y = _dynamic_concat(sqrt_c * u, jnp.eye(big_n, dtype=u.dtype), m)
    q, _ = lax_linalg.qr(y, full_matrices=False)
    q1 = _mask(lax.slice(q, (0, 0), (big_m, big_n)), (m, n))
    q2 = lax.dynamic_slice_in_dim(q, m, big_n, axis=0)
    q2 = jnp.conj(_mask(q2, (n, n)).T)
    return e * u + a_minus_e_by_sqrt_c * (q1 @ q2)


def _use_cholesky(u, m, n, params):
    from traxla.lax import linalg as lax_linalg
    jnp = _np()
    a_minus_e, c, e = params
    _, big_n = u.shape
    x = c * (jnp.conj(u.T) @ u) + jnp.eye(big_n, dtype=u.dtype)
    x = _mask(x, (n, n), jnp.eye(big_n, dtype=x.dtype))
    y = lax_linalg.cholesky(x, symmetrize_input=False)
    z = jnp.conj(lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True,
                                             conjugate_a=True))
    z = jnp.conj(lax_linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                                             conjugate_a=True).T)
    return e * u + a_minus_e * z


def _coefficients(eps, max_iterations):
    """The iteration's (a, b, c) weights, computed on the host as JAX does."""
    def qr_params(a, b, c):
        e = b / c
        return (a - e) / c ** 0.5, c ** 0.5, e

    def chol_params(a, b, c):
        e = b / c
        return a - e, c, e

    cholesky_cutoff = 100
    qr_coefs, chol_coefs = [], []
    lo, tol_l, k = eps, 10.0 * eps / 2.0, 0
    while lo + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lo * lo
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lo = lo * (a + b * l2) / (1 + c * l2)
        (qr_coefs if c > cholesky_cutoff else chol_coefs).append(
            qr_params(a, b, c) if c > cholesky_cutoff else chol_params(a, b, c))
    return qr_coefs, chol_coefs, tol_l, chol_params


def _qdwh(x, m, n, max_iterations, eps):
    from traxla import lax
    from traxla.numpy import linalg as jnp_linalg
    jnp = _np()
    if eps is None:
        real = np.float32 if np.dtype(x.dtype) in (np.float32, np.complex64) else np.float64
        eps = float(np.finfo(real).eps)
    one_norm = jnp_linalg.norm(x, ord=1)
    inf_norm = jnp_linalg.norm(x, ord=np.inf)
    alpha_inverse = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    alpha_inverse = jnp.where(one_norm == 0, 1, alpha_inverse)
    u = x * alpha_inverse.astype(x.dtype)
    qr_coefs, chol_coefs, tol_l, chol_params = _coefficients(eps, max_iterations)
    tol_norm = np.cbrt(tol_l)

    def iteration(k, state, update_fn, coefs, test_convergence):
        u, _ = state
        params = chol_params(3, 1, 3) if coefs is None else \
            lax.dynamic_index_in_dim(coefs, k, keepdims=False)
        u_prev = u
        u = update_fn(u, m, n, params)
        not_converged = jnp.asarray(True)
        if test_convergence:
            not_converged = jnp_linalg.norm(u - u_prev) > tol_norm
        return u, not_converged

    def iterate(u, coefs, **kwargs):
        if not coefs:
            return u, jnp.asarray(True)
        coefs = jnp.array(coefs).astype(x.dtype)
        body = functools.partial(iteration, coefs=coefs, **kwargs)
        return lax.fori_loop(0, len(coefs), body, (u, jnp.asarray(True)))

    u, _ = iterate(u, coefs=qr_coefs, update_fn=_use_qr, test_convergence=False)
    u, not_converged = iterate(u, coefs=chol_coefs, update_fn=_use_cholesky,
                               test_convergence=True)

    def cond_fun(state):
        k, _, not_converged = state
        return jnp.logical_and(not_converged, k < max_iterations)

    def body_fun(state):
        k, u, not_converged = state
        u, not_converged = iteration(k, (u, not_converged), coefs=None,
                                     update_fn=_use_cholesky, test_convergence=True)
        return k + 1, u, not_converged

    k = np.int32(len(qr_coefs) + len(chol_coefs))
    num_iters, u, not_converged = lax.while_loop(cond_fun, body_fun, (k, u, not_converged))
    u = 1.5 * u - 0.5 * u @ (jnp.conj(u.T) @ u)
    h = jnp.conj(u.T) @ x
    h = (h + jnp.conj(h.T)) / 2
    return u, h, num_iters, jnp.logical_not(not_converged)


def _qdwh_impl(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    x = _np().asarray(x)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    big_m, big_n = x.shape
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = big_m, big_n
    return _qdwh(x, m, n, max_iterations, eps)


@functools.lru_cache(maxsize=None)
def _jitted():
    from traxla.numpy._jitutil import jit_named
    return jit_named(_qdwh_impl, "qdwh", ("is_hermitian", "max_iterations", "eps"))


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition ``x = u h`` of an ``M x N`` matrix (``M >= N``) by QDWH:
    ``(u, h, num_iters, is_converged)``."""
    return _jitted()(x, is_hermitian=is_hermitian, max_iterations=max_iterations, eps=eps,
                     dynamic_shape=dynamic_shape)
