"""QDWH polar decomposition (``jax.lax.linalg.qdwh``): the QR-based dynamically weighted Halley
iteration of Nakatsukasa, Bai and Gygi (SIAM J. Matrix Anal. Appl. 31(5), 2010), with JAX's
coefficients, its switch from QR steps to Cholesky steps, and its convergence test.

Written with lax operations: each step computes what JAX's (written against ``jax.numpy``)
computes, in the same order."""
from __future__ import annotations

import functools

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.ir import dtypes
from traxla.lax.linalg import (HIGHEST, _H, _T, _conj, _eye, _matmul as _matmul_default, cholesky,
                               qr, triangular_solve)


def _matmul(a, b):
    """A product as JAX's qdwh makes it, under default_matmul_precision('float32'):
    HIGHEST precision (full float32 passes on a TPU), the operands' dtype preferred."""
    return _matmul_default(a, b, HIGHEST, lax.dtype_of(a))


def _scalar(like, value):
    """``value`` (a Python number or a traced scalar) as an operand of ``like``'s dtype."""
    return value if lax._is_array(value) else lax._const(like, value)


def _less(x, bound):
    """``x < bound`` for a Python or traced integer ``bound``, promoted as in JAX."""
    if not lax._is_array(bound):
        return lax.lt(x, lax._const(x, bound))
    typed = [(lax.dtype_of(v), lax.aval_of(v).weak_type) for v in (x, bound)]
    dt, _ = dtypes.result_type_of(*typed)
    x, bound = (v if d == dt else lax._convert_element_type(v, dt, False)
                for v, (d, _) in zip((x, bound), typed))
    return lax.lt(x, bound)


def _mask(x, dims, alternative=None):
    """``x`` where every index ``i`` is below ``dims[i]`` (``None``: no bound), else
    ``alternative`` (zero when ``None``)."""
    shape = lax.shape_of(x)
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            mask_i = _less(lax.broadcasted_iota(np.int32, shape, i), d)
            mask = mask_i if mask is None else lax.bitwise_and(mask, mask_i)
    if mask is None:
        return x
    return _where(mask, x, 0 if alternative is None else alternative)


def _where_impl(condition, x, y):
    """``jnp.where``'s function: both values converted to their promoted dtype, then
    broadcast to the common shape, then a select."""
    typed = [(lax.dtype_of(v), lax.aval_of(v).weak_type) for v in (x, y)]
    dt, _ = dtypes.result_type_of(*typed)
    shape = lax.shape_of(condition)
    for v in (x, y):
        if len(lax.shape_of(v)) > len(shape):
            shape = lax.shape_of(v)
    out = []
    for v, (d, weak) in zip((x, y), typed):
        if d != dt or weak:
            v = lax._convert_element_type(v, dt, False)
        if lax.shape_of(v) != shape:
            v = lax.broadcast_in_dim(v, shape, ())
        out.append(v)
    if lax.shape_of(condition) != shape:
        condition = lax.broadcast_in_dim(condition, shape, ())
    return lax.select(condition, *out)


_where_impl.__name__ = "_where"
_where = jit(_where_impl)


def _norm_impl(x, *, ord=None):
    """``jnp.linalg.norm``'s function for a matrix: ``ord`` 1 or inf, the largest sum of
    absolute values along columns or rows; None, the Frobenius norm."""
    if ord is None:
        sq = lax.real(lax.mul(x, lax.conj(x))) if dtypes.is_complex(lax.dtype_of(x)) \
            else lax.mul(x, x)
        return lax.sqrt(lax.reduce_sum(sq, (0, 1)))
    sums = lax.reduce_sum(lax.abs(x), (0 if ord == 1 else 1,))
    return lax.max(lax._const(sums, 0), lax.reduce_max(sums, (0,)))


_norm_impl.__name__ = "norm"
_norm = jit(_norm_impl, static_argnames=("ord",))


def _pad_in_dim(x, high, axis):
    pads = [(0, 0, 0)] * len(lax.shape_of(x))
    pads[axis] = (0, high, 0)
    return lax.pad(x, np.zeros((), lax.dtype_of(x)), pads)


def _dynamic_concat(a, b, m, axis=0):
    if m is None:
        return lax.concatenate([a, b], axis)
    return lax.dynamic_update_slice_in_dim(_pad_in_dim(a, lax.shape_of(b)[axis], axis), b, m,
                                           axis)


def _times(c, x):
    """``c * x`` for a Python or array scalar ``c``."""
    return lax.mul(_scalar(x, c), x)


def _unpack(params):
    """A step's three coefficients: a tuple of Python floats, or a length-3 array."""
    if isinstance(params, tuple):
        return params
    return tuple(lax.index_in_dim(params, i, keepdims=False) for i in range(3))


def _use_qr(u, m, n, params):
    a_minus_e_by_sqrt_c, sqrt_c, e = _unpack(params)
    big_m, big_n = lax.shape_of(u)
    y = _dynamic_concat(_times(sqrt_c, u), _eye(lax.dtype_of(u), (big_n, big_n)), m)
    q, _ = qr(y, full_matrices=False)
    q1 = _mask(lax.slice(q, (0, 0), (big_m, big_n)), (m, n))
    q2 = lax.dynamic_slice_in_dim(q, m, big_n, axis=0)
    q2 = _H(_mask(q2, (n, n)))
    return lax.add(_times(e, u), _times(a_minus_e_by_sqrt_c, _matmul(q1, q2)))


def _use_cholesky(u, m, n, params):
    a_minus_e, c, e = _unpack(params)
    _, big_n = lax.shape_of(u)
    x = lax.add(_times(c, _matmul(_H(u), u)), _eye(lax.dtype_of(u), (big_n, big_n)))
    x = _mask(x, (n, n), _eye(lax.dtype_of(u), (big_n, big_n)))
    y = cholesky(x, symmetrize_input=False)
    z = _conj(triangular_solve(y, _T(u), left_side=True, lower=True, conjugate_a=True))
    z = _H(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                            conjugate_a=True))
    return lax.add(_times(e, u), _times(a_minus_e, z))


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
    dtype = lax.dtype_of(x)
    if eps is None:
        real = np.float32 if np.dtype(dtype) in (np.float32, np.complex64) else np.float64
        eps = float(np.finfo(real).eps)
    one_norm, inf_norm = _norm(x, ord=1), _norm(x, ord=np.inf)
    alpha_inverse = lax.mul(lax.rsqrt(one_norm), lax.rsqrt(inf_norm))
    alpha_inverse = _where(lax.eq(one_norm, lax._const(one_norm, 0)), 1, alpha_inverse)
    u = lax.mul(x, lax.convert_element_type(alpha_inverse, dtype))
    qr_coefs, chol_coefs, tol_l, chol_params = _coefficients(eps, max_iterations)
    tol_norm = lax.cbrt(lax._convert_element_type(tol_l, np.dtype(np.float32), True))
    true = lax._asarray(np.bool_(True))

    def converging(u, u_prev):
        norm = _norm(lax.sub(u, u_prev))
        return lax.gt(norm, lax.convert_element_type(tol_norm, lax.dtype_of(norm)))

    def iteration(k, state, update_fn, coefs, test_convergence):
        u, _ = state
        params = chol_params(3, 1, 3) if coefs is None else \
            lax.dynamic_index_in_dim(coefs, k, keepdims=False)
        u_prev = u
        u = update_fn(u, m, n, params)
        not_converged = converging(u, u_prev) if test_convergence else true
        return u, not_converged

    def iterate(u, coefs, **kwargs):
        if not coefs:
            return u, true
        coefs = lax._asarray(np.asarray(coefs, np.float64).astype(dtype))
        body = functools.partial(iteration, coefs=coefs, **kwargs)
        return lax.fori_loop(0, len(coefs), body, (u, true))

    u, _ = iterate(u, coefs=qr_coefs, update_fn=_use_qr, test_convergence=False)
    u, not_converged = iterate(u, coefs=chol_coefs, update_fn=_use_cholesky,
                               test_convergence=True)

    def cond_fun(state):
        k, _, not_converged = state
        # ``jnp.logical_and``: the (weak) comparison made a strong bool first
        below = lax._convert_element_type(lax.lt(k, lax._const(k, max_iterations)),
                                          np.dtype(np.bool_), False)
        return lax.bitwise_and(not_converged, below)

    def body_fun(state):
        k, u, not_converged = state
        u, not_converged = iteration(k, (u, not_converged), coefs=None,
                                     update_fn=_use_cholesky, test_convergence=True)
        return lax.add(k, lax._const(k, 1)), u, not_converged

    k = len(qr_coefs) + len(chol_coefs)  # a Python int: a weak carry, as JAX's
    num_iters, u, not_converged = lax.while_loop(cond_fun, body_fun, (k, u, not_converged))
    u = lax.sub(_times(1.5, u), _matmul(_times(0.5, u), _matmul(_H(u), u)))
    h = _matmul(_H(u), x)
    h = lax.div(lax.add(h, _H(h)), lax._const(h, 2))
    return u, h, num_iters, lax.bitwise_not(not_converged)


def _qdwh_impl(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    x = lax._asarray(x)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    big_m, big_n = lax.shape_of(x)
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = big_m, big_n
    return _qdwh(x, m, n, max_iterations, eps)


_qdwh_impl.__name__ = "qdwh"
_jitted = jit(_qdwh_impl, static_argnames=("is_hermitian", "max_iterations", "eps"))


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition ``x = u h`` of an ``M x N`` matrix (``M >= N``) by QDWH:
    ``(u, h, num_iters, is_converged)``."""
    return _jitted(x, is_hermitian=is_hermitian, max_iterations=max_iterations, eps=eps,
                   dynamic_shape=dynamic_shape)
