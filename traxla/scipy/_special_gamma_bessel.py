"""More of ``jax.scipy.special``: the gamma family (gamma, gammasgn, loggamma, beta, betaln,
factorial, comb, poch, multigammaln), incomplete gamma/beta, polygamma, Hurwitz zeta, the
modified Bessel functions I0/I1 (and scaled), Box-Cox, relative entropy/KL divergence,
Bernoulli numbers and erfcx, with JAX's formulas and custom derivatives."""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_jvp
from traxla.ir import dtypes
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact
from traxla.scipy.special import _inexact_unary, _xlogx, digamma, gammaln, xlogy

__all__ = ["gammasgn", "loggamma", "gamma", "betaln", "factorial", "comb", "beta", "betainc",
           "gammainc", "gammaincc", "boxcox", "boxcox1p", "multigammaln", "kl_div", "rel_entr",
           "zeta", "polygamma", "i0", "i0e", "i1", "i1e", "poch", "bernoulli", "erfcx"]


def _c(x, value):
    return np.array(value, lax.dtype_of(x))


def _no_complex(name, x):
    if dtypes.is_complex(lax.dtype_of(x)):
        raise ValueError(f"{name} does not support complex-valued inputs.")


@jit
def gammasgn(x):
    """The sign of the gamma function (NaN at poles and for NaN)."""
    x, = promote_args_inexact("gammasgn", x)
    _no_complex("gammasgn", x)
    typ = lax.dtype_of(x).type
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select(
        [(x_negative & (x == floor_x)) | jnp.isnan(x),
         (x_negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))],
        [typ(np.nan), typ(-1.0)],
        typ(1.0))


def loggamma(x):
    """The principal branch of log Gamma (real arguments: NaN for x <= 0)."""
    x, = promote_args_inexact("loggamma", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise NotImplementedError("loggamma of complex arguments is not implemented in traxla.")
    res = lax.lgamma(x)
    return jnp.where(x > 0, res, jnp.nan)


def gamma(x):
    """The gamma function."""
    x, = promote_args_inexact("gamma", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise NotImplementedError("gamma of complex arguments is not implemented in traxla.")
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _algdiv(a, b):
    """log(gamma(a)) - log(gamma(a + b)) for b >= 8 (a <= b), as SciPy's cdflib ``algdiv``."""
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log |B(a, b)|, accurate for large arguments (SciPy's cdflib algorithm)."""
    a, b = promote_args_inexact("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def factorial(n, exact=False):
    """n! as Gamma(n + 1) (0 for negative n)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    n, = promote_args_inexact("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):  # noqa: N803 - SciPy's name
    """The number of combinations of N things taken k at a time."""
    N, k = promote_args_inexact("comb", N, k)  # noqa: N806
    if repetition:
        cond = (k == 0) & (N >= 0)
        return jnp.where(cond, 1.0, comb(N + k - 1, k, repetition=False))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_n = jnp.where(cond, N, 0.0)
    safe_k = jnp.where(cond, k, 0.0)
    result = lax.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return jnp.where(cond, result, 0.0)


def beta(a, b):
    """The beta function B(a, b)."""
    a, b = promote_args_inexact("beta", a, b)
    _no_complex("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    _no_complex("betainc", x)
    return lax.betainc(a, b, x)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def _boxcox_of_log(name, log, x, lmbda):
    """``(exp(l * log(x)) - 1) / l``, or ``log(x)`` for ``l = 0``, with ``log`` the log or log1p."""
    x, lmbda = promote_args_inexact(name, x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = log(x)
    return jnp.where(lmbda_is_zero, log_x, jnp.expm1(safe_lmbda * log_x) / safe_lmbda)


def boxcox(x, lmbda):
    """Box-Cox transform ((x^l - 1) / l, or log x for l = 0)."""
    return _boxcox_of_log("boxcox", jnp.log, x, lmbda)


def boxcox1p(x, lmbda):
    """Box-Cox transform of 1 + x."""
    return _boxcox_of_log("boxcox1p", jnp.log1p, x, lmbda)


def multigammaln(a, d):
    """log of the multivariate gamma function of dimension ``d``."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError("d argument of multigammaln must be a concrete integer") from None
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(lax.mul(lax.mul(_c(a, 0.25), d_), lax.sub(d_, _c(a, 1))),
                       lax.log(_c(a, np.pi)))
    b = lax.div(jnp.arange(d, dtype=d_.dtype), _c(a, 2))
    res = jnp.sum(gammaln(jnp.expand_dims(a, axis=-1)
                          - jnp.expand_dims(b, axis=tuple(range(a.ndim)))), axis=-1)
    return res + constant


def rel_entr(p, q):
    """p log(p / q) (0 where p = 0 <= q, inf outside the domain)."""
    p, q = promote_args_inexact("rel_entr", p, q)
    _no_complex("rel_entr", p)
    zero = _c(p, 0.0)
    both_gt_zero_mask = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero_mask = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero_mask, p, 1)
    safe_q = jnp.where(both_gt_zero_mask, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero_mask, log_val, jnp.where(one_zero_mask, zero, np.inf))


def kl_div(p, q):
    """p log(p / q) - p + q."""
    p, q = promote_args_inexact("kl_div", p, q)
    _no_complex("kl_div", p)
    return rel_entr(p, q) - p + q


@custom_jvp
def zeta(x, q=None):
    """The Hurwitz zeta function (q is required: the Riemann zeta is not implemented)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def jvp(primals, tangents):  # JAX's name: its jaxpr prints ``jvp=jvp``
    x, q = primals
    x_dot, q_dot = tangents
    out = zeta(x, q)
    # d/dq zeta(x, q) = -x zeta(x + 1, q); d/dx has no closed form (JAX differentiates a
    # series expansion there): only q's tangent is supported here.
    if type(x_dot).__name__ != "Zero" and not _is_zero_tangent(x_dot):
        raise NotImplementedError("traxla: the derivative of zeta with respect to x is not "
                                  "implemented; differentiate with respect to q.")
    return out, -x * zeta(x + 1, q) * q_dot


def _is_zero_tangent(t):
    try:
        return not np.any(np.asarray(t))
    except Exception:  # noqa: BLE001 - a traced tangent is not known to be zero
        return False


zeta.defjvp(jvp)


def polygamma(n, x):
    """The n-th derivative of digamma (n an integer array)."""
    if not dtypes.is_int(lax.dtype_of(n)):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{lax.dtype_of(n)}.")
    n_arr, x_arr = promote_args_inexact("polygamma", n, x)
    _no_complex("polygamma", x_arr)
    return lax.polygamma(n_arr, x_arr)


def _unscaled(bessel_e):
    """``I(x)`` from the exponentially scaled ``exp(-|x|) I(x)``."""
    return lambda x: lax.mul(lax.exp(lax.abs(x)), bessel_e(x))


i0e = _inexact_unary("i0e", lax.bessel_i0e, "exp(-|x|) I0(x).")
i0 = _inexact_unary("i0", _unscaled(lax.bessel_i0e), "The modified Bessel function of order 0.")
i1e = _inexact_unary("i1e", lax.bessel_i1e, "exp(-|x|) I1(x).")
i1 = _inexact_unary("i1", _unscaled(lax.bessel_i1e), "The modified Bessel function of order 1.")


@custom_jvp
def poch(z, m):
    """The Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z)."""
    z, m = promote_args_inexact("poch", z, m)
    _no_complex("jnp.poch", z)
    return jnp.where(m == 0., jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, ans, z, m: digamma(z + m) * poch(z, m) * m_dot)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("Argument n of bernoulli must be a concrete integer") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = np.arange(4, n + 1, 2, dtype=np.float64)
    # B_m = -2 m! / (2 pi)^m zeta(m) for even m: a running product and a short zeta sum.
    q1 = (1. / np.pi ** 2) * np.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = np.arange(2, 50, dtype=np.float64)  # 2 ** -50 < 1e-15
    q2 = np.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(jnp.asarray((q1 * (1 + q2)).astype(bn.dtype)))


@custom_jvp
def _erfcx(x):
    if x.dtype == np.float64:
        return _erfcx_impl(x, nterms=9)
    if x.dtype == np.float32:
        return _erfcx_impl(x, nterms=5)
    return _erfcx_impl(x.astype(np.float32), nterms=5).astype(x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - _c(x, 2. / np.sqrt(np.pi))))


def _erfcx_asymptotic(x, nterms):
    coeffs = [7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, .75, -.5, 1.]
    t = _c(x, 1.) / lax.square(x)
    p = jnp.polyval(np.array(coeffs[-nterms:], dtype=x.dtype), t)
    return p / (x * _c(x, np.sqrt(np.pi)))


def _erfcx_impl(x, nterms):
    threshold = np.sqrt(np.log(dtypes.finfo(x.dtype).max))
    large = x > _c(x, threshold)
    safe_x = lax.select(large, lax.full_like(x, 1.), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    return lax.select(large, _erfcx_asymptotic(x, nterms), direct)


def erfcx(x):
    """The scaled complementary error function exp(x^2) erfc(x) (real arguments)."""
    x, = promote_args_inexact("erfcx", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise NotImplementedError("erfcx of complex arguments (the Faddeeva function) is not "
                                  "implemented in traxla.")
    return _erfcx(x)
