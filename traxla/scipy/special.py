"""``traxla.scipy.special``, as ``jax.scipy.special`` defines it: ``gammaln``/``digamma``
bind the ``lgamma``/``digamma`` primitives, ``xlogy``/``xlog1py``/``logit``/``log_ndtr``
carry JAX's ``custom_jvp`` rules."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.autodiff import custom_jvp
from traxla.ir import dtypes
from traxla.nn import log_softmax as _nn_log_softmax, softmax as _nn_softmax
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact
from traxla.numpy._reductions import logsumexp  # noqa: F401

__all__ = ["gammaln", "digamma", "erf", "erfc", "erfinv", "expit", "logit", "xlogy", "xlog1py",
           "entr", "logsumexp", "softmax", "log_softmax", "ndtr", "ndtri", "log_ndtr"]


def _lax_const(x, val):
    return lax._const(x, val)


def _inexact_unary(name, lax_fn, doc=None):
    def fn(x):
        x, = promote_args_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


gammaln = _inexact_unary("gammaln", lax.lgamma, "``log|Gamma(x)|`` (the ``lgamma`` primitive).")
digamma = _inexact_unary("digamma", lax.digamma, "``d/dx log Gamma(x)`` (the ``digamma`` primitive).")
erf = _inexact_unary("erf", lax.erf)
erfc = _inexact_unary("erfc", lax.erfc)
erfinv = _inexact_unary("erfinv", lax.erf_inv)


@custom_jvp
def logit(x):
    """``log(x / (1 - x))``."""
    x, = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_lax_const(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_lax_const(x, 1), x))))


def expit(x):
    """``1 / (1 + exp(-x))`` (the ``logistic`` primitive)."""
    x, = promote_args_inexact("expit", x)
    return lax.logistic(x)


def _x_times_log(name, log, x, y):
    """``x * log(y)`` for ``log`` in (``lax.log``, ``lax.log1p``), 0 where ``x == 0``."""
    x, y = promote_args_inexact(name, x, y)
    x_ok = x != 0.
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, log(y)), jnp.zeros_like(x))


def _x_times_log_jvp(fn, log, log_arg, primals, tangents):
    """JAX's JVP of ``fn(x, y) = x * log(y)``: ``log(y) dx + x / log_arg(y) dy``, where
    ``log_arg(y)`` is what ``log`` takes the log of (``y``, or ``1 + y`` for ``log1p``)."""
    (x, y) = primals
    (x_dot, y_dot) = tangents
    result = fn(x, y)
    return result, (x_dot * log(y) + y_dot * x / log_arg(y)).astype(result.dtype)


@custom_jvp
def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (NaN in ``y`` propagates)."""
    return _x_times_log("xlogy", lax.log, x, y)


def _xlogy_jvp(primals, tangents):
    return _x_times_log_jvp(xlogy, lax.log, lambda y: y, primals, tangents)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
    """``x * log1p(y)``, 0 where ``x == 0``."""
    return _x_times_log("xlog1py", lax.log1p, x, y)


def _xlog1py_jvp(primals, tangents):
    return _x_times_log_jvp(xlog1py, lax.log1p, lambda y: 1 + y, primals, tangents)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x):
    """Elementwise entropy ``-x log x`` (0 at 0, -inf for negative x)."""
    x, = promote_args_inexact("entr", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, _lax_const(x, 0)), lax.full_like(x, -np.inf),
                      lax.neg(_xlogx(x)))


def softmax(x, /, *, axis=None):
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    return _nn_log_softmax(x, axis=axis)


# -- the normal distribution's CDF, its log and its inverse ------------------------------------

def ndtr(x):
    """The standard normal CDF."""
    x = jnp.asarray(x)
    dt = lax.dtype_of(x)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dt} is not supported, see docstring for supported types.")
    return _ndtr(x)


def _ndtr(x):
    dtype = lax.dtype_of(x).type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2),
                   dtype(1.) + lax.erf(w),
                   lax.select(lax.gt(w, dtype(0.)), dtype(2.) - lax.erfc(z), lax.erfc(z)))
    return dtype(0.5) * y


def ndtri(p):
    """The inverse of the standard normal CDF."""
    dt = lax.dtype_of(p)
    if dt not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dt} is not supported, see docstring for supported types.")
    return _ndtri(p)


_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0]
_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0]
_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9]


def _ndtri(p):
    dtype = lax.dtype_of(p).type
    shape = np.shape(p) if not hasattr(p, "aval") else lax.shape_of(p)
    p0, q0, p1, q1, p2, q2 = (np.array(c, dtype=dtype) for c in (_P0, _Q0, _P1, _Q1, _P2, _Q2))
    maybe_complement_p = jnp.where(p > dtype(-np.expm1(-2.)), dtype(1.) - p, p)
    sanitized_mcp = jnp.where(maybe_complement_p == dtype(0.), jnp.full(shape, dtype(0.5)),
                              maybe_complement_p)
    w = sanitized_mcp - dtype(0.5)
    ww = lax.square(w)
    x_for_big_p = w + w * ww * (jnp.polyval(p0, ww) / jnp.polyval(q0, ww))
    x_for_big_p *= -dtype(np.sqrt(2. * np.pi))
    z = lax.sqrt(dtype(-2.) * lax.log(sanitized_mcp))
    first_term = z - lax.log(z) / z
    second_term_small_p = jnp.polyval(p2, 1 / z) / jnp.polyval(q2, 1 / z) / z
    second_term_otherwise = jnp.polyval(p1, 1 / z) / jnp.polyval(q1, 1 / z) / z
    x_for_small_p = first_term - second_term_small_p
    x_otherwise = first_term - second_term_otherwise
    x = jnp.where(sanitized_mcp > dtype(np.exp(-2.)), x_for_big_p,
                  jnp.where(z >= dtype(8.0), x_for_small_p, x_otherwise))
    x = jnp.where(p > dtype(1. - np.exp(-2.)), x, -x)
    infinity = jnp.full(shape, dtype(np.inf))
    return jnp.where(p == dtype(0.0), -infinity, jnp.where(p == dtype(1.0), infinity, x))


_LOGNDTR_FLOAT64_LOWER = np.array(-20, np.float64)
_LOGNDTR_FLOAT32_LOWER = np.array(-10, np.float32)
_LOGNDTR_FLOAT64_UPPER = np.array(8, np.float64)
_LOGNDTR_FLOAT32_UPPER = np.array(5, np.float32)


def _log_ndtr(x, series_order=3):
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x_arr = jnp.asarray(x)
    dt = lax.dtype_of(x_arr)
    if dt == np.float64:
        lower_segment, upper_segment = _LOGNDTR_FLOAT64_LOWER, _LOGNDTR_FLOAT64_UPPER
    elif dt == np.float32:
        lower_segment, upper_segment = _LOGNDTR_FLOAT32_LOWER, _LOGNDTR_FLOAT32_UPPER
    else:
        raise TypeError(f"x.dtype={np.dtype(dt)} is not supported.")
    x_arr_gt_upper_segment = lax.gt(x_arr, upper_segment)
    ndtr_arg = jnp.where(x_arr_gt_upper_segment, -x_arr, lax.max(x_arr, lower_segment))
    ndtr_res = _ndtr(ndtr_arg)
    return jnp.where(x_arr_gt_upper_segment, -ndtr_res,
                     jnp.where(lax.gt(x_arr, lower_segment), lax.log(ndtr_res),
                               _log_ndtr_lower(lax.min(x_arr, lower_segment), series_order)))


_log_ndtr.__name__ = "log_ndtr"
_log_ndtr_custom = custom_jvp(_log_ndtr, nondiff_argnums=(1,))


def log_ndtr(x, series_order=3):
    """``log(ndtr(x))``, accurate far into the lower tail (asymptotic series)."""
    return _log_ndtr_custom(x, series_order)

_norm_logpdf_constant = np.log(np.sqrt(2 * np.pi))


def _norm_logpdf(x):
    neg_half = _lax_const(x, -0.5)
    log_normalizer = _lax_const(x, _norm_logpdf_constant)
    return lax.sub(lax.mul(neg_half, lax.square(x)), log_normalizer)


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = log_ndtr(x, series_order=series_order)
    t_out = lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))
    return ans, t_out


_log_ndtr_custom.defjvp(_log_ndtr_jvp)


def _log_ndtr_lower(x, series_order):
    dtype = lax.dtype_of(x).type
    x_2 = lax.square(x)
    log_scale = -dtype(0.5) * x_2 - lax.log(-x) - dtype(0.5 * np.log(2. * np.pi))
    return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _double_factorial(n: int):
    return np.prod(np.arange(n, 1, -2))


def _log_ndtr_asymptotic_series(x, series_order):
    dtype = lax.dtype_of(x).type
    if series_order <= 0:
        return np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum = jnp.zeros_like(x)
    odd_sum = jnp.zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = np.array(_double_factorial(2 * n - 1), dtype) / x_2n
        if n % 2:
            odd_sum += y
        else:
            even_sum += y
        x_2n *= x_2
    return dtype(1.) + even_sum - odd_sum


from traxla.scipy._special_gamma_bessel import (bernoulli, beta, betainc, betaln, boxcox, boxcox1p,  # noqa: E402,F401
                            comb, erfcx, factorial, gamma, gammainc, gammaincc, gammasgn, i0, i0e,
                            i1, i1e, kl_div, loggamma, multigammaln, poch, polygamma, rel_entr,
                            zeta)
from traxla.scipy._special_gamma_bessel import __all__ as _more_all  # noqa: E402

__all__ += _more_all
from traxla.scipy._special_expi_dawsn_spence_jn import bessel_jn, dawsn, exp1, expi, spence  # noqa: E402,F401

__all__ += ["bessel_jn", "dawsn", "exp1", "expi", "spence"]
from traxla.scipy._special_integrals import expn, fresnel, sici, wofz  # noqa: E402,F401

__all__ += ["expn", "fresnel", "sici", "wofz"]
from traxla.scipy._special_hyper import hyp1f1, hyp2f1, lpmn_values, owens_t, sph_harm_y  # noqa: E402,F401

__all__ += ["hyp1f1", "hyp2f1", "owens_t", "sph_harm_y"]
