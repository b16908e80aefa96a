"""More of ``jax.scipy.special``: the confluent and Gauss hypergeometric functions ``hyp1f1``
and ``hyp2f1`` (Pearson, Olver & Porter 2014 series, with JAX's series derivatives), Owen's T
(Patefield & Tandy's 13-point quadrature) and the spherical harmonics ``sph_harm_y`` (normalized
associated Legendre recurrences), written as JAX 0.10.2 writes them so the jaxprs agree."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_jvp
from traxla.ir import dtypes
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact
from traxla.numpy._searching import concrete_or_error
from traxla.scipy._special_gamma_bessel import gamma
from traxla.scipy.special import digamma

__all__ = ["hyp1f1", "hyp2f1", "lpmn_values", "owens_t", "sph_harm_y"]

# Every series below stops after this many terms, as JAX's do.
_MAX_TERMS = 250


def _lax_const(x, value):
    # JAX's lax._const of an array: a NumPy scalar array of x's dtype (never weak)
    return np.array(value, lax.dtype_of(x))


def _eps(x):
    return dtypes.finfo(x.dtype).eps


def _concrete_or_error(convert, value, context):
    """``convert(value)``, or JAX's ConcretizationTypeError when ``value`` is traced."""
    return convert(concrete_or_error(value, context))


def _series_cond(state, precision):
    serie, k, term = state
    return (k < _MAX_TERMS) & (lax.abs(term) / lax.abs(serie) > precision)


# -- hyp1f1 -----------------------------------------------------------------------------------

def _hyp1f1_serie(a, b, x):
    """Taylor series of 1F1 (Pearson, Olver & Porter, eq. 3.2, method (a))."""
    precision = _eps(x)

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    return lax.while_loop(lambda s: _series_cond(s, precision), body, (1, 1, a / b * x))[0]


def _hyp1f1_asymptotic(a, b, x):
    """Large-|x| asymptotic expansion of 1F1 (Pearson, Olver & Porter, eq. 3.8, real inputs)."""
    precision = _eps(x)

    def body(state):
        serie, k, term = state
        serie += term
        term *= (b - a + k) * (1 - a + k) / (k + 1) / x
        k += 1
        return serie, k, term

    init = 1, 1, (b - a) * (1 - a) / x
    serie = lax.while_loop(lambda s: _series_cond(s, precision), body, init)[0]
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


def _hyp1f1_param_derivative(a, b, x, weight):
    """sum_k weight(k) * (a)_k / (b)_k * x^k / k!, the series of d1F1/da or d1F1/db."""
    precision = _eps(x)

    def body(state):
        serie, k, term = state
        serie += term * weight(k)
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return serie, k, term

    return lax.while_loop(lambda s: _series_cond(s, precision), body, (0, 1, a / b * x))[0]


@jit
@jnp.vectorize
def _hyp1f1_a_derivative(a, b, x):
    return _hyp1f1_param_derivative(a, b, x, lambda k: digamma(a + k) - digamma(a))


@jit
@jnp.vectorize
def _hyp1f1_b_derivative(a, b, x):
    return _hyp1f1_param_derivative(a, b, x, lambda k: digamma(b) - digamma(b + k))


@jit
def _hyp1f1_x_derivative(a, b, x):
    return a / b * hyp1f1(a + 1, b + 1, x)


@custom_jvp
@jit
@jnp.vectorize
def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) for real inputs. As JAX,
    ``hyp1f1(0, 0, x) == 1`` (SciPy gives NaN there)."""
    a, b, x = promote_args_inexact('hyp1f1', a, b, x)
    if dtypes.is_complex(x.dtype):
        raise ValueError("hyp1f1 does not support complex-valued inputs.")
    result = lax.cond(lax.abs(x) < 100, _hyp1f1_serie, _hyp1f1_asymptotic, a, b, x)
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, result, jnp.array(1, dtype=x.dtype), jnp.exp(x),
                        jnp.array(np.inf, dtype=x.dtype))


hyp1f1.defjvps(
    lambda a_dot, primal_out, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot,
    lambda b_dot, primal_out, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot,
    lambda x_dot, primal_out, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot,
)


# -- hyp2f1 -----------------------------------------------------------------------------------

def _hyp2f1_terminal(a, b, c, x):
    """The finite sum when a or b is a non-positive integer (Pearson, Olver & Porter, eq. 4.1).
    Of a and b, the negative integer of larger magnitude (still below |c| when c is a
    non-positive integer) bounds the loop."""
    eps = _eps(x) * 50
    ib = jnp.round(b)
    mask = jnp.logical_and(
        b < a,
        jnp.logical_and(
            jnp.abs(b - ib) < eps,
            jnp.logical_not(jnp.logical_and(c % 1 == 0, jnp.logical_and(c <= 0, c > b)))))
    orig_a = a
    a = jnp.where(mask, b, a)
    b = jnp.where(mask, orig_a, b)
    a = jnp.abs(a)

    def body(i, state):
        serie, term = state
        term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        serie += term
        return serie, term

    init = (jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.fori_loop(jnp.array(1, dtype=a.dtype), a + 1, body, init)[0]


def _hyp2f1_serie(a, b, c, x):
    """Taylor series of 2F1 (Pearson, Olver & Porter, eq. 4.1)."""
    rtol = _eps(x)

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x
        k += 1
        return serie, k, term

    def cond(state):
        serie, k, term = state
        return (k < _MAX_TERMS) & (lax.abs(term) > rtol * lax.abs(serie))

    init = (jnp.array(0, dtype=x.dtype), jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.while_loop(cond, body, init)[0]


def _hyp2f1_terminal_or_serie(a, b, c, x):
    """The terminating sum, the series, or (x > 0.9 with integer c - a - b) the digamma
    transformation (Pearson, Olver & Porter, sec. 4.6.1)."""
    eps = _eps(x) * 50
    d = c - a - b
    ia = jnp.round(a)
    ib = jnp.round(b)
    id = jnp.round(d)
    neg_int_a = jnp.logical_and(a <= 0, jnp.abs(a - ia) < eps)
    neg_int_b = jnp.logical_and(b <= 0, jnp.abs(b - ib) < eps)
    neg_int_a_or_b = jnp.logical_or(neg_int_a, neg_int_b)
    not_neg_int_a_or_b = jnp.logical_not(neg_int_a_or_b)
    index = jnp.where(jnp.logical_and(x > 0.9, not_neg_int_a_or_b),
                      jnp.where(jnp.abs(d - id) >= eps, 0, 1),
                      jnp.where(neg_int_a_or_b, 2, 0))
    return lax.select_n(index, _hyp2f1_serie(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x),
                        _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_digamma_transform(a, b, c, x):
    """2F1 near x = 1 when c - a - b is an integer (AMS55 15.3.10-15.3.12)."""
    rtol = _eps(x)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, jnp.array(0, dtype=d.dtype))
    d2 = jnp.where(rd >= 0, jnp.array(0, dtype=d.dtype), d)
    ard = jnp.where(rd >= 0, rd, -rd).astype('int32')
    ax = jnp.log(s)

    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y /= gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state):
        _, _, _, _, _, _, q, _, _, t, y = state
        return jnp.logical_and(t < _MAX_TERMS, jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state):
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) \
            - digamma(b + t + d1) - ax
        q = p * r
        y += q
        p *= s * (a + t + d1) / (t + 1.0)
        p *= (b + t + d1) / (t + 1.0 + e)
        t += 1.0
        return a, ax, b, d1, e, p, q, r, s, t, y

    init = (a, ax, b, d1, e, p, y, jnp.array(0, dtype=x.dtype), s, jnp.array(1, dtype=x.dtype), y)
    _, _, _, _, _, _, q, r, _, _, y = lax.while_loop(cond, body, init)

    def compute_sum(y):
        y1 = jnp.array(1, dtype=x.dtype)
        t = jnp.array(0, dtype=x.dtype)
        p = jnp.array(1, dtype=x.dtype)

        def for_body(i, state):
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p *= s * (a + t + d2) * (b + t + d2) / r
            t += 1.0
            p /= t
            y1 += p
            return a, b, d2, e, p, s, t, y1

        y1 = lax.fori_loop(1, ard, for_body, (a, b, d2, e, p, s, t, y1))[-1]
        p = gamma(c)
        y1 *= gamma(e) * p / (gamma(a + d1) * gamma(b + d1))
        y *= p / (gamma(a + d2) * gamma(b + d2))
        y = jnp.where((ard & 1) != 0, -y, y)
        q = s ** rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)

    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


def _hyp2f1_param_derivative(a, b, c, x, weight):
    """sum_k weight(k) * (a)_k (b)_k / (c)_k * x^k / k!, the series of d2F1/d{a,b,c}."""
    precision = _eps(x)

    def body(state):
        serie, k, term = state
        serie += term * weight(k)
        term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
        k += 1
        return serie, k, term

    return lax.while_loop(lambda s: _series_cond(s, precision), body, (0, 1, a * b / c * x))[0]


@jit
@jnp.vectorize
def _hyp2f1_a_derivative(a, b, c, x):
    return _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(a + k) - digamma(a))


@jit
@jnp.vectorize
def _hyp2f1_b_derivative(a, b, c, x):
    return _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(b + k) - digamma(b))


@jit
@jnp.vectorize
def _hyp2f1_c_derivative(a, b, c, x):
    return _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(c) - digamma(c + k))


@jit
def _hyp2f1_x_derivative(a, b, c, x):
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


@custom_jvp
@jit
@jnp.vectorize
def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for real inputs; as JAX, inf for
    x > 1 (outside the series' region) and at the poles of c."""
    a, b, c, x = promote_args_inexact('hyp2f1', a, b, c, x)
    eps = _eps(x) * 50
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    id = jnp.round(d)
    # The cases, in JAX's order: 0 -> 1, 1 -> inf, 2 -> Euler's transformation,
    # 3/4 -> (1-x)^-a or ^-b, 5 -> Gauss's sum at x = 1, 6 -> the series.
    index = jnp.where(
        jnp.logical_or(x == 0, jnp.logical_and(jnp.logical_or(a == 0, b == 0), c != 0)), 0,
        jnp.where(jnp.logical_or(c == 0, jnp.logical_and(c < 0, c % 1 == 0)), 1,
          jnp.where(jnp.logical_and(d <= -1, jnp.logical_not(jnp.logical_and(
                        jnp.abs(d - id) >= eps, s < 0))), 2,
            jnp.where(jnp.logical_and(d <= 0, x == 1), 1,
              jnp.where(jnp.logical_and(x < 1, b == c), 3,
                jnp.where(jnp.logical_and(x < 1, a == c), 4,
                  jnp.where(x > 1, 1,
                    jnp.where(x == 1, 5, 6))))))))
    return lax.select_n(index,
                        jnp.array(1, dtype=x.dtype),
                        jnp.array(np.inf, dtype=x.dtype),
                        s ** d * _hyp2f1_terminal_or_serie(ca, cb, c, x),
                        s ** (-a),
                        s ** (-b),
                        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _hyp2f1_terminal_or_serie(a, b, c, x))


hyp2f1.defjvps(
    lambda a_dot, primal_out, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot,
    lambda b_dot, primal_out, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot,
    lambda c_dot, primal_out, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot,
    lambda x_dot, primal_out, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot,
)


# -- owens_t ----------------------------------------------------------------------------------

# 13-point Gauss-type quadrature of T(h, a) = (1/2pi) int_0^a exp(-h^2 (1+u^2)/2) / (1+u^2) du
# after u^2 = a^2 t, the 1/(2pi) factor and the Jacobian folded into the weights (Patefield &
# Tandy 2000, method T5): T(h, a) ~ a * sum_i w_i exp(-h^2 (1 + a^2 t_i)/2) / (1 + a^2 t_i).
_OWENS_T_QUAD_PTS = np.array([
    0.0035082039676451715, 0.031279042338030754, 0.085266826283219451, 0.16245071730812277,
    0.25851196049125435, 0.36807553840697534, 0.48501092905604697, 0.60277514152618577,
    0.71477884217753227, 0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
    0.99178832974629704,
])
_OWENS_T_QUAD_WTS = np.array([
    0.018831438115323503, 0.018567086243977649, 0.018042093461223386, 0.017263829606398753,
    0.016243219975989857, 0.014994592034116705, 0.013535474469662088, 0.011886351605820165,
    0.010070377242777432, 0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
    0.0016793031084546090,
])


def _owens_t_quadrature(h, a):
    quad_pts = jnp.expand_dims(_OWENS_T_QUAD_PTS, tuple(range(a.ndim)))
    r = jnp.square(a)[..., None] * quad_pts
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1. + r)) / (1. + r)
    return a * (integrand @ _OWENS_T_QUAD_WTS)


@custom_jvp
def _owens_t_impl(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    root_2 = _lax_const(h, np.sqrt(2))
    h_normed = h / root_2
    # The quadrature is accurate for |a| <= 1; T(h, a) for |a| > 1 follows from T(a h, 1/a).
    modified_a = jnp.where(abs_a <= 1., abs_a, jnp.reciprocal(abs_a))
    modified_h = jnp.where(abs_a <= 1., h, abs_a * h)
    result = _owens_t_quadrature(modified_h, modified_a)
    # Exact values at h = 0 and a = 1.
    result = jnp.where(modified_h == 0., jnp.arctan(modified_a) / (2 * np.pi), result)
    result = jnp.where(
        modified_a == 1.,
        0.125 * lax.erfc(-modified_h / root_2) * lax.erfc(modified_h / root_2),
        result)
    normh = lax.erfc(h_normed)
    normah = lax.erfc(abs_a * h_normed)
    result = jnp.where(
        abs_a > 1.,
        jnp.where(abs_a * h <= 0.67,
                  0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result,
                  0.25 * (normh + normah - normh * normah) - result),
        result)
    result = lax.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, jnp.nan), result)


def _owens_t_jvp(primals, tangents):
    h, a = primals
    dh, da = tangents
    result = _owens_t_impl(h, a)
    root_2 = _lax_const(h, np.sqrt(2))
    # dT/dh = -exp(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi))
    dout_dh = (-lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2)
               / (2. * _lax_const(h, np.sqrt(2. * np.pi))))
    # dT/da = exp(-(a^2 + 1) h^2 / 2) / (2 pi (a^2 + 1))
    dout_da = (lax.exp(-0.5 * (lax.square(a) + 1.) * lax.square(h))
               / (2. * np.pi * (lax.square(a) + 1.)))
    return result, (dout_dh * dh + dout_da * da).astype(result.dtype)


_owens_t_impl.defjvp(_owens_t_jvp)


def owens_t(h, a):
    """Owen's T function T(h, a) = (1/2pi) int_0^a exp(-h^2 (1+x^2)/2) / (1+x^2) dx."""
    h, a = promote_args_inexact("owens_t", h, a)
    return _owens_t_impl(h, a)



# -- sph_harm_y -------------------------------------------------------------------------------

def _gen_recurrence_mask(l_max, dtype, is_normalized=True):
    """The coefficients of the three-term recurrence in the degree of the normalized functions,
    as masks over (order, degree) placed on the diagonal plane i + j == k of a 3D array (one
    slice per recurrence step)."""
    m_mat, l_mat = jnp.meshgrid(jnp.arange(l_max + 1, dtype=dtype),
                                jnp.arange(l_max + 1, dtype=dtype), indexing='ij')
    if is_normalized:
        c0 = l_mat * l_mat
        c1 = m_mat * m_mat
        c2 = 2.0 * l_mat
        c3 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = jnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = jnp.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    d0_mask_indices = jnp.triu_indices(l_max + 1, 1)
    d1_mask_indices = jnp.triu_indices(l_max + 1, 2)
    d_zeros = jnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = d_zeros.at[d0_mask_indices].set(d0[d0_mask_indices])
    d1_mask = d_zeros.at[d1_mask_indices].set(d1[d1_mask_indices])
    i, j, k = jnp.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    d0_mask_3d = jnp.einsum('jk,ijk->ijk', d0_mask, mask)
    d1_mask_3d = jnp.einsum('jk,ijk->ijk', d1_mask, mask)
    return (d0_mask_3d, d1_mask_3d)


@jit(static_argnums=(0, 2))
def _gen_associated_legendre(l_max, x, is_normalized=True):
    """The associated Legendre functions P_l^m(x), 0 <= m, l <= l_max, as an array of shape
    (order, degree, len(x)), normalized so that the spherical harmonics are orthonormal (JAX's
    ``is_normalized=True``, the only kind sph_harm_y uses). The diagonal and first off-diagonal
    come from closed recurrences, the rest from the three-term recurrence in the degree."""
    p = jnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=x.dtype)
    a_idx = jnp.arange(1, l_max + 1, dtype=x.dtype)
    b_idx = jnp.arange(l_max, dtype=x.dtype)
    # P_0^0. JAX's jnp.sqrt keeps the Python float pi (a weak literal printed in full);
    # traxla's rounds it to float32 first, lax.sqrt keeps it as JAX does.
    if is_normalized:
        initial_value = 0.5 / lax.sqrt(np.pi)
        f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    else:  # (lpmn_values(..., is_normalized=False))
        initial_value = 1.0
        f_a = jnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[(0, 0)].set(initial_value)

    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial_value * jnp.einsum('i,ij->ij', f_a, y)
    diag_indices = jnp.diag_indices(l_max + 1)
    p = p.at[(diag_indices[0][1:], diag_indices[1][1:])].set(p_diag)

    p_offdiag = jnp.einsum('ij,ij->ij', jnp.einsum('i,j->ij', f_b, x),
                           p[jnp.diag_indices(l_max)])
    offdiag_indices = (diag_indices[0][:l_max], diag_indices[1][:l_max] + 1)
    p = p.at[offdiag_indices].set(p_offdiag)

    d0_mask_3d, d1_mask_3d = _gen_recurrence_mask(l_max, dtype=x.dtype,
                                                  is_normalized=is_normalized)

    def body_fun(i, p_val):
        coeff_0 = d0_mask_3d[i]
        coeff_1 = d1_mask_3d[i]
        h = (jnp.einsum('ij,ijk->ijk', coeff_0,
                        jnp.einsum('ijk,k->ijk', jnp.roll(p_val, shift=1, axis=1), x))
             - jnp.einsum('ij,ijk->ijk', coeff_1, jnp.roll(p_val, shift=2, axis=1)))
        return p_val + h

    p = p.astype(jnp.result_type(p, x, d0_mask_3d))
    if l_max > 1:
        p = lax.fori_loop(lower=2, upper=l_max + 1, body_fun=body_fun, init_val=p)
    return p


@jit(static_argnums=(4,))
def _sph_harm(n, m, theta, phi, n_max):
    cos_colatitude = jnp.cos(theta)
    legendre = _gen_associated_legendre(n_max, cos_colatitude)
    legendre_val = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(legendre_val * jnp.real(vandermonde),
                            legendre_val * jnp.imag(vandermonde))
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    return jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi), theta the colatitude and phi the longitude.
    As JAX, ``n_max`` (the largest ``n``; static) is an extra argument, degrees above it are
    clipped to it, and ``diff_n`` is not supported."""
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    n_max = _concrete_or_error(
        int, n_max, 'The `n_max` argument of `jnp.scipy.special.sph_harm` must '
        'be statically specified to use `sph_harm` within JAX transformations.')
    return _sph_harm(n, m, theta, phi, n_max)


def lpmn_values(m, n, z, is_normalized):
    """The associated Legendre functions of the first kind P_l^m(z), 0 <= m, l <= n, as an
    array of shape (n + 1, n + 1, len(z)) (order, degree, point), as JAX's (deprecated there;
    only ``m == n``); ``is_normalized``: scaled so that the spherical harmonics are
    orthonormal."""
    dtype = lax.dtype_of(z)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"z.dtype={dtype} is not supported, see docstring for supported types.")
    if z.ndim != 1:
        raise ValueError("z must be a 1D array.")
    m = int(concrete_or_error(m, "Argument m of lpmn."))
    n = int(concrete_or_error(n, "Argument n of lpmn."))
    if m != n:
        raise NotImplementedError("Computations for m!=n are not yet supported.")
    return _gen_associated_legendre(n, z, bool(is_normalized))
