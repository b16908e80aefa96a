"""JVP and transpose rules of special functions, complex parts, tile and scatter-sub
(JAX's special.py and lax.py)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.rules.elementwise import P as E
from traxla.autodiff.ad import Zero, is_undefined, jvp_rules, transpose_rules
from traxla.autodiff.rules._util import _const, _square, defjvp, defjvp2, deflinear2, unbroadcast
from traxla.autodiff.rules.indexing import _scatter_add_transpose, _scatter_addsub_jvp


# -- special functions, complex parts, tile, scatter-sub (JAX's special.py / lax.py) ----------------

from traxla.ir import ALL_PRIMITIVES as _ALL  # noqa: E402

if "erfc" in E:
    defjvp(E["erfc"], lambda g, x: lax.mul(_const(x, -2. / np.sqrt(np.pi)),
                                           lax.mul(g, lax.exp(lax.neg(_square(x))))))
if "lgamma" in E and "digamma" in E:
    defjvp(E["lgamma"], lambda g, x: lax.mul(g, lax.digamma(x)))
# digamma: its JVP (polygamma(1, x)) is defined below with the polygamma primitive

if "real" in E and "complex" in E:
    deflinear2(E["real"], lambda t, x: [lax.complex(t, np.zeros((), lax.dtype_of(t)))])
    deflinear2(E["imag"], lambda t, x: [lax.complex(np.zeros((), lax.dtype_of(t)), lax.neg(t))])

    def _complex_transpose(t, x, y):
        return [unbroadcast(x.aval, lax.real(t)) if is_undefined(x) else None,
                unbroadcast(y.aval, lax.imag(lax.neg(t))) if is_undefined(y) else None]

    deflinear2(E["complex"], _complex_transpose)

if "conj" in E:
    def _conj_transpose(t, x, *, input_dtype):
        if dtypes.is_complex(input_dtype):
            return [lax.conj(t)]
        return [lax.real(t)]

    deflinear2(E["conj"], _conj_transpose)

if "tile" in _ALL:
    def _tile_transpose(ct, x, *, reps):
        if not is_undefined(x):
            return [None]
        shape = tuple(k for pair in zip(reps, x.aval.shape) for k in pair)
        return [lax.reduce_sum(lax.reshape(ct, shape), tuple(2 * i for i in range(len(reps))))]

    deflinear2(_ALL["tile"], _tile_transpose)

if "scatter-sub" in _ALL:
    _scatter_sub_p = _ALL["scatter-sub"]

    def _scatter_sub_transpose(t, operand, indices, updates, **params):
        ct_operand, _, ct_updates = _scatter_add_transpose(t, operand, indices, updates, **params)
        if ct_updates is not None and type(ct_updates) is not Zero:
            ct_updates = lax.neg(ct_updates)
        return [ct_operand, None, ct_updates]

    jvp_rules[_scatter_sub_p] = _scatter_addsub_jvp(_scatter_sub_p)
    transpose_rules[_scatter_sub_p] = _scatter_sub_transpose


# -- incomplete gamma/beta, polygamma, Bessel I0e/I1e (JAX's lax/special.py) ----------------------

def _not_supported(message):
    def rule(*args, **params):
        raise ValueError(message)
    return rule


def _igamma_gradx(g, a, x):
    return g * lax.exp(lax.neg(x) + (a - lax.full_like(a, 1)) * lax.log(x) - lax.lgamma(a))


def _igamma_grada(g, a, x):
    return g * lax.igamma_grad_a(a, x)


def _polygamma_gradx(g, m, x):
    return g * lax.polygamma(lax.add(m, _const(m, 1)), x)


def _betainc_gradx(g, a, b, x):
    lbeta = lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)
    return lax.exp((b - 1) * lax.log1p(lax.neg(x)) + (a - 1) * lax.log(x) - lbeta) * g


def _bessel_i1e_jvp(g, y, x):
    eps = dtypes.finfo(lax.dtype_of(x)).eps
    x_is_not_tiny = lax.abs(x) > eps
    safe_x = lax.select(x_is_not_tiny, x, lax.full_like(x, eps))
    dy_dx = lax.bessel_i0e(safe_x) - y * (lax.sign(safe_x) + lax.reciprocal(safe_x))
    return g * lax.select(x_is_not_tiny, dy_dx, lax.full_like(x, 0.5))


if "igamma" in _ALL:
    _betainc_ab = _not_supported("Betainc gradient with respect to a and b not supported.")
    defjvp(_ALL["igamma"], _igamma_grada, _igamma_gradx)
    defjvp(_ALL["igammac"], lambda g, a, x: lax.neg(_igamma_grada(g, a, x)),
           lambda g, a, x: lax.neg(_igamma_gradx(g, a, x)))
    defjvp(_ALL["polygamma"],
           _not_supported("polygamma gradient with respect to m is not supported"),
           _polygamma_gradx)
    defjvp(_ALL["regularized_incomplete_beta"], _betainc_ab, _betainc_ab, _betainc_gradx)
    defjvp(E["digamma"], lambda g, x: lax.mul(g, lax.polygamma(_const(x, 1), x)))
    defjvp2(_ALL["bessel_i0e"], lambda g, y, x: g * (lax.bessel_i1e(x) - lax.sign(x) * y))
    defjvp2(_ALL["bessel_i1e"], _bessel_i1e_jvp)
