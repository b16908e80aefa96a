"""Jet rules of the elementwise primitives (JAX's recurrences for truncated Taylor series:
each output coefficient from the lower ones, see https://github.com/jax-ml/jax/files/6717197/jet.pdf)."""
from __future__ import annotations

from functools import partial

import numpy as np

from traxla import lax
from traxla import numpy as jnp
from traxla.ir.rules.ad import add_any_p
from traxla.jet import (chain_series, def_comp, def_deriv, deflinear, defzero, jet2,
                        jet_rules)

for _p in (lax.le_p, lax.lt_p, lax.gt_p, lax.ge_p, lax.eq_p, lax.ne_p, lax.not_p, lax.and_p,
           lax.or_p, lax.xor_p, lax.floor_p, lax.ceil_p, lax.round_p, lax.sign_p,
           lax.stop_gradient_p, lax.is_finite_p, lax.shift_left_p,
           lax.shift_right_arithmetic_p, lax.shift_right_logical_p,
           lax.bitcast_convert_type_p):
    defzero(_p)

for _p in (lax.neg_p, lax.real_p, lax.complex_p, lax.conj_p, lax.imag_p, lax.add_p, add_any_p,
           lax.sub_p, lax.convert_element_type_p, lax.copy_p):
    deflinear(_p)

def_deriv(lax.erf_p,
          lambda x: lax.mul(lax._const(x, 2. / np.sqrt(np.pi)), lax.exp(lax.neg(lax.square(x)))))

def_comp(lax.expm1_p, lambda x: lax.exp(x) - 1)
def_comp(lax.log1p_p, lambda x: lax.log(1 + x))
def_comp(lax.sqrt_p, lambda x: x ** 0.5)
def_comp(lax.square_p, lambda x: x * x)
def_comp(lax.rsqrt_p, lambda x: x ** -0.5)
def_comp(lax.asinh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)))
def_comp(lax.acosh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)))
def_comp(lax.atanh_p, lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)))
def_comp(lax.erfc_p, lambda x: 1 - lax.erf(x))
def_comp(lax.rem_p, lambda x, y: x - y * lax.floor(x / y))
def_comp(lax.clamp_p, lambda a, x, b: lax.min(lax.max(a, x), b))


def _erf_inv_rule(primals_in, series_in):
    x, = primals_in
    series, = series_in
    u = [x] + series
    primal_out = lax.erf_inv(x)
    v = [primal_out] + [None] * len(series)
    # the derivative on the co-domain: d/dx erf_inv(x) = sqrt(pi)/2 exp(erf_inv(x)^2)
    deriv_const = np.sqrt(np.pi) / 2.
    c = [lax.mul(deriv_const, lax.exp(lax.square(primal_out)))] + [None] * (len(series) - 1)
    tmp_sq = [lax.square(v[0])] + [None] * (len(series) - 1)
    tmp_exp = [lax.exp(tmp_sq[0])] + [None] * (len(series) - 1)
    for k in range(1, len(series)):
        v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
        tmp_sq[k] = sum(v[k - j] * v[j] for j in range(k + 1))
        tmp_exp[k] = sum(j * tmp_exp[k - j] * tmp_sq[j] for j in range(1, k + 1)) / k
        c[k] = deriv_const * tmp_exp[k]
    k = len(series)
    v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
    primal_out, *series_out = v
    return primal_out, series_out


jet_rules[lax.erf_inv_p] = _erf_inv_rule


def _exp_taylor(primals_in, series_in, **_):
    x, = primals_in
    series, = series_in
    return chain_series(None, [x] + series, lax.exp(x))  # exp' = exp


jet_rules[lax.exp_p] = _exp_taylor


def _pow_taylor(primals_in, series_in):
    u_, r_ = primals_in
    x, series = jet2(lambda x, y: lax.mul(y, lax.log(x)), primals_in, series_in)
    return chain_series(None, [x] + series, u_ ** r_)  # u^r = exp(r log u)


jet_rules[lax.pow_p] = _pow_taylor


def _pow_by_squaring(x, n):
    if n < 0:
        return _pow_by_squaring(1 / x, -n)
    elif n == 0:
        return 1
    elif n % 2 == 0:
        return _pow_by_squaring(x * x, n / 2)
    elif n % 2 == 1:
        return x * _pow_by_squaring(x * x, (n - 1) / 2)


def _integer_pow_taylor(primals_in, series_in, *, y):
    if y == 0:
        return jet2(jnp.ones_like, primals_in, series_in)
    return jet2(lambda x: _pow_by_squaring(x, y), primals_in, series_in)


jet_rules[lax.integer_pow_p] = _integer_pow_taylor


def _logistic_taylor(primals_in, series_in, **_):
    x, = primals_in
    series, = series_in
    u = [x] + series
    v = [lax.logistic(x)] + [None] * len(series)
    e = [v[0] * (1 - v[0])] + [None] * len(series)  # sigmoid' = sigmoid * (1 - sigmoid)
    for k in range(1, len(v)):
        v[k] = sum(j * e[k - j] * u[j] for j in range(1, k + 1)) / k
        e[k] = (1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1))
    primal_out, *series_out = v
    return primal_out, series_out


jet_rules[lax.logistic_p] = _logistic_taylor


def _tanh_taylor(primals_in, series_in, **_):
    x, = primals_in
    series, = series_in
    primals_in, *series_in = [2 * x] + [2 * s for s in series]
    primal_out, series_out = _logistic_taylor((primals_in,), (series_in,))
    series_out = [2 * s for s in series_out]  # (before the primal: the order JAX stages in)
    return 2 * primal_out - 1, series_out


jet_rules[lax.tanh_p] = _tanh_taylor


def _log_taylor(primals_in, series_in, **_):
    x, = primals_in
    series, = series_in
    u = [x] + series
    v = [lax.log(x)] + [None] * len(series)
    for k in range(1, len(v)):
        conv = sum(j * v[j] * u[k - j] for j in range(1, k))
        v[k] = (u[k] - conv / k) / u[0]
    primal_out, *series_out = v
    return primal_out, series_out


jet_rules[lax.log_p] = _log_taylor


def _atan2_taylor(primals_in, series_in):
    x, y = primals_in
    primal_out = lax.atan2(x, y)
    x, series = jet2(lax.div, primals_in, series_in)
    one = lax._const(x, 1)
    c0, cs = jet2(lambda x: lax.div(one, 1 + lax.square(x)), (x,), (series,))
    return chain_series([c0] + cs, [x] + series, primal_out)


jet_rules[lax.atan2_p] = _atan2_taylor


def _div_taylor_rule(primals_in, series_in):
    x, y = primals_in
    x_terms, y_terms = series_in
    u = [x] + x_terms
    w = [y] + y_terms
    v = [None] * len(u)
    for k in range(0, len(v)):
        conv = sum(v[j] * w[k - j] for j in range(0, k))
        v[k] = (u[k] - conv) / w[0]
    primal_out, *series_out = v
    return primal_out, series_out


jet_rules[lax.div_p] = _div_taylor_rule


def _sinusoidal_rule(sign, prims, primals_in, series_in, **_):
    x, = primals_in
    series, = series_in
    u = [x] + series
    s, c = prims
    s = [s(x)] + [None] * len(series)
    c = [c(x)] + [None] * len(series)
    for k in range(1, len(s)):
        s[k] = sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k
        c[k] = sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k * sign
    return (s[0], s[1:]), (c[0], c[1:])


def _get_ind(f, ind):
    return lambda *args, **kwargs: f(*args, **kwargs)[ind]


jet_rules[lax.sin_p] = _get_ind(partial(_sinusoidal_rule, -1, (lax.sin, lax.cos)), 0)
jet_rules[lax.cos_p] = _get_ind(partial(_sinusoidal_rule, -1, (lax.sin, lax.cos)), 1)
jet_rules[lax.sinh_p] = _get_ind(partial(_sinusoidal_rule, 1, (lax.sinh, lax.cosh)), 0)
jet_rules[lax.cosh_p] = _get_ind(partial(_sinusoidal_rule, 1, (lax.sinh, lax.cosh)), 1)


def bilinear_taylor_rule(prim, primals_in, series_in, **params):
    """The Cauchy product: ``v_k = sum_j op(u_j, w_{k-j})`` for an operation linear in
    each operand (mul, dot_general, conv_general_dilated)."""
    x, y = primals_in
    x_terms, y_terms = series_in
    u = [x] + x_terms
    w = [y] + y_terms
    v = [None] * len(u)
    op = partial(prim.bind, **params)
    for k in range(0, len(v)):
        v[k] = sum(op(u[j], w[k - j]) for j in range(0, k + 1))
    primal_out, *series_out = v
    return primal_out, series_out


jet_rules[lax.mul_p] = partial(bilinear_taylor_rule, lax.mul_p)


def _abs_taylor_rule(x, series_in, **params):
    x, = x
    zero = lax.full_like(x, 0, shape=())
    primal_out = lax.abs_p.bind(x, **params)
    negs = lax.select(lax.lt(x, zero), lax.full_like(x, -1), lax.full_like(x, 1.0))
    series_out = [negs * terms_in for terms_in, in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.abs_p] = _abs_taylor_rule


def _select_n_taylor_rule(primal_in, series_in, **params):
    b, *cases = primal_in
    primal_out = lax.select_n(b, *cases)
    series_out = [lax.select_n(b, *terms_in[1:]) for terms_in in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.select_n_p] = _select_n_taylor_rule


def _lax_max_taylor_rule(primal_in, series_in):
    x, y = jnp.broadcast_arrays(*primal_in)
    xgy = x > y  # greater than mask
    xey = x == y  # equal to mask
    primal_out = lax.select(xgy, x, y)

    def select_max_and_avg_eq(x_i, y_i):
        """x where x > y, the average where x == y."""
        max_i = lax.select(xgy, x_i, y_i)
        return lax.select(xey, (x_i + y_i) / 2, max_i)

    series_out = [select_max_and_avg_eq(*jnp.broadcast_arrays(*terms_in))
                  for terms_in in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.max_p] = _lax_max_taylor_rule


def _lax_min_taylor_rule(primal_in, series_in):
    x, y = primal_in
    if np.shape(x) != np.shape(y):
        # JAX 0.10.2's min rule does not broadcast (unlike its max rule) and fails with
        # "select cases must have the same shapes" on jnp.minimum(x, 0.5): broadcast then
        x, y = jnp.broadcast_arrays(x, y)
        series_in = [jnp.broadcast_arrays(*terms_in) for terms_in in zip(*series_in)]
        series_in = list(zip(*series_in))
    xgy = x < y  # less than mask
    xey = x == y  # equal to mask
    primal_out = lax.select(xgy, x, y)

    def select_min_and_avg_eq(x_i, y_i):
        """x where x < y, the average where x == y."""
        min_i = lax.select(xgy, x_i, y_i)
        return lax.select(xey, (x_i + y_i) / 2, min_i)

    series_out = [select_min_and_avg_eq(*terms_in) for terms_in in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.min_p] = _lax_min_taylor_rule
