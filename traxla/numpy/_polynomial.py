"""Polynomials of ``jax.numpy`` (coefficients highest power first): ``poly``,
``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``polyfit``
(least squares on a scaled Vandermonde matrix) and ``roots`` (eigenvalues of the companion
matrix). ``polyfit``, ``roots`` and ``poly`` of a matrix use ``traxla.numpy.linalg``;
``polymul``/``poly`` use ``jnp.convolve`` where the namespace has it and an exact private
full convolution otherwise."""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes, promote_dtypes_inexact
from traxla.numpy._ufuncs import where, ufuncs, abs as _abs
from traxla.numpy._creation import zeros, array, ones, arange, full, empty
from traxla.numpy._manipulation import diag, vander, trim_zeros
from traxla.numpy._diagonals_tiles import roll
from traxla.numpy._reductions import all as _all, argmin
from traxla.numpy._searching import concrete_or_error
from traxla.numpy._shape import atleast_1d, concatenate
from traxla.numpy._linalg import dot, outer


def _namespace():
    return jnp


def _linalg(what):
    jnp = _namespace()
    if not hasattr(jnp, "linalg"):
        raise NotImplementedError(f"jnp.{what} needs traxla.numpy.linalg, which this build "
                                  "does not have.")
    return jnp.linalg


def _convolve_full(a, b):
    """``np.convolve(a, b, 'full')`` for 1-d arrays: out[k] = sum_i a[i] b[k - i]."""
    jnp = _namespace()
    if hasattr(jnp, "convolve"):
        return jnp.convolve(a, b, mode="full")
    n, m = a.shape[0], b.shape[0]
    rows = lax.broadcasted_iota(np.int32, (n, m), 0)
    cols = lax.broadcasted_iota(np.int32, (n, m), 1)
    products = a[:, None] * b[None, :]
    return zeros(n + m - 1, products.dtype).at[(rows + cols).ravel()].add(products.ravel())


def _complex_of(dt):
    if dtypes.is_complex(dt):
        return dt
    return np.dtype(np.complex128) if np.dtype(dt).itemsize == 8 else np.dtype(np.complex64)


def _roots_no_zeros_impl(p):
    if p.size < 2:
        return array([], dtype=_complex_of(p.dtype))
    A = diag(ones((p.size - 2,), p.dtype), -1)
    A = A.at[0, :].set(-p[1:] / p[0])
    return _linalg("roots").eigvals(A)


_roots_no_zeros = jit_named(_roots_no_zeros_impl, "_roots_no_zeros")


def _roots_with_zeros_impl(p, num_leading_zeros):
    p = where(len(p) == num_leading_zeros, 1.0, p)
    roots_ = _roots_no_zeros(roll(p, -num_leading_zeros))
    roots_ = lax.sort_key_val(roots_ == 0, roots_)[1]
    return where(arange(roots_.size) < roots_.size - num_leading_zeros, roots_,
                 complex(np.nan, np.nan))


_roots_with_zeros = jit_named(_roots_with_zeros_impl, "_roots_with_zeros")


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p``."""
    p = ensure_arraylike("roots", p)
    p, = promote_dtypes_inexact(p)
    p_arr = atleast_1d(p)
    if p_arr.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p_arr.size < 2:
        return array([], dtype=_complex_of(p_arr.dtype))
    num_leading_zeros = where(_all(p_arr == 0), len(p_arr), argmin(p_arr == 0))
    if strip_zeros:
        num_leading_zeros = int(concrete_or_error(
            num_leading_zeros, "The error occurred in the jnp.roots() function. To use this "
            "within a JIT-compiled context, pass strip_zeros=False, but be aware that leading "
            "zeros will result in some returned roots being set to NaN."))
        return _roots_no_zeros(p_arr[num_leading_zeros:])
    return _roots_with_zeros(p_arr, num_leading_zeros)


def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    linalg = _linalg("polyfit")
    if w is None:
        x_arr, y_arr = ensure_arraylike("polyfit", x, y)
    else:
        x_arr, y_arr, w = ensure_arraylike("polyfit", x, y, w)
    deg = operator.index(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_arr.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_arr.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_arr.ndim < 1 or y_arr.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_arr.shape[0] != y_arr.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x_arr) * float(dtypes.finfo(x_arr.dtype).eps)
    rcond = float(rcond)
    lhs, rhs = vander(x_arr, order), y_arr
    if w is not None:
        w_arr, = promote_dtypes_inexact(w)
        if w_arr.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w_arr.shape[0] != y_arr.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs *= w_arr[:, np.newaxis]
        rhs = rhs * (w_arr[:, np.newaxis] if rhs.ndim == 2 else w_arr)
    scale = ufuncs["sqrt"]((lhs * lhs).sum(axis=0))
    lhs /= scale[np.newaxis, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[np.newaxis, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, lax._lift(lax._asarray(rcond))
    if cov:
        Vbase = linalg.inv(dot(lhs.T, lhs))
        Vbase /= outer(scale, scale)
        if cov == "unscaled":
            fac = array(1.0)
        else:
            if len(x_arr) <= order:
                raise ValueError("the number of data points must exceed order to scale the "
                                 "covariance matrix")
            fac = resids / (len(x_arr) - order)
        if y_arr.ndim == 1:
            return c, Vbase * atleast_1d(fac)[np.newaxis]
        return c, Vbase[:, :, np.newaxis] * atleast_1d(fac)[np.newaxis, np.newaxis, :]
    return c


polyfit = jit_named(_polyfit, "polyfit", ("deg", "rcond", "full", "cov"))


def _poly(seq_of_zeros):
    seq_of_zeros = ensure_arraylike("poly", seq_of_zeros)
    seq_of_zeros, = promote_dtypes_inexact(seq_of_zeros)
    arr = atleast_1d(seq_of_zeros)
    sh = arr.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        arr = _linalg("poly").eigvals(arr)
    if arr.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = arr.dtype
    if len(arr) == 0:
        return ones((), dtype=dt)
    a = ones((1,), dtype=dt)
    for k in range(len(arr)):
        a = _convolve_full(a, array([1, -arr[k]], dtype=dt))
    return a


poly = jit_named(_poly, "poly")


def _polyadd(a1, a2):
    a1, a2 = ensure_arraylike("polyadd", a1, a2)
    a1_arr, a2_arr = promote_dtypes(a1, a2)
    if a2_arr.shape[0] <= a1_arr.shape[0]:
        return a1_arr.at[-a2_arr.shape[0]:].add(a2_arr)
    return a2_arr.at[-a1_arr.shape[0]:].add(a1_arr)


polyadd = jit_named(_polyadd, "polyadd")


def _polysub(a1, a2):
    a1, a2 = ensure_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return polyadd(a1, -lax._lift(a2))


polysub = jit_named(_polysub, "polysub")


def _polyint(p, m=1, k=None):
    m = operator.index(m)
    k = 0 if k is None else k
    p, k = ensure_arraylike("polyint", p, k)
    p_arr, k_arr = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k_arr = atleast_1d(k_arr)
    if len(k_arr) == 1:
        k_arr = full((m,), k_arr[0])
    if k_arr.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p_arr
    grid = (arange(len(p_arr) + m, dtype=p_arr.dtype)[np.newaxis]
            - arange(m, dtype=p_arr.dtype)[:, np.newaxis])
    coeff = ufuncs["maximum"](1, grid).prod(0)[::-1]
    return ufuncs["true_divide"](concatenate((p_arr, k_arr)), coeff)


polyint = jit_named(_polyint, "polyint", ("m",))


def _polyder(p, m=1):
    p = ensure_arraylike("polyder", p)
    m = operator.index(m)
    p_arr, = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p_arr
    coeff = (arange(m, len(p_arr), dtype=p_arr.dtype)[np.newaxis]
             - arange(m, dtype=p_arr.dtype)[:, np.newaxis]).prod(0)
    return p_arr[:-m] * coeff[::-1]


polyder = jit_named(_polyder, "polyder", ("m",))


def polymul(a1, a2, *, trim_leading_zeros=False):
    a1, a2 = ensure_arraylike("polymul", a1, a2)
    a1_arr, a2_arr = (lax._lift(v) for v in promote_dtypes_inexact(a1, a2))
    if trim_leading_zeros and (len(a1_arr) > 1 or len(a2_arr) > 1):
        a1_arr, a2_arr = trim_zeros(a1_arr, trim="f"), trim_zeros(a2_arr, trim="f")
    if len(a1_arr) == 0:
        a1_arr = zeros(1, dtype=a2_arr.dtype)
    if len(a2_arr) == 0:
        a2_arr = zeros(1, dtype=a1_arr.dtype)
    return _convolve_full(a1_arr, a2_arr)


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division ``u / v``."""
    u, v = ensure_arraylike("polydiv", u, v)
    u_arr, v_arr = (lax._lift(x) for x in promote_dtypes_inexact(u, v))
    m, n = len(u_arr) - 1, len(v_arr) - 1
    scale = 1. / v_arr[0]
    q = zeros(max(m - n + 1, 1), dtype=u_arr.dtype)
    for k in range(0, m - n + 1):
        d = scale * u_arr[k]
        q = q.at[k].set(d)
        u_arr = u_arr.at[k:k + n + 1].add(-d * v_arr)
    if trim_leading_zeros:
        tol = float(np.sqrt(dtypes.finfo(u_arr.dtype).eps))
        data = concrete_or_error(u_arr, "Error arose in the `filt` argument of trim_zeros_tol()")
        nz = np.abs(data) < tol
        if nz.all():
            return q, empty(0, u_arr.dtype)
        u_arr = u_arr[int(np.argmin(nz)):]
    return q, u_arr
