"""``traxla.scipy.special``'s integral functions ``expn``, ``fresnel``, ``sici`` and ``wofz``
against SciPy and JAX 0.10.2: values in float32 and float64 (edge values as JAX gives them),
dtypes, errors, gradients against finite differences, vmap against stacking, and the
``make_jaxpr`` text (of the functions and their gradients) against JAX's."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import traxla
import traxla.scipy.special as tsp

jax = pytest.importorskip("jax")
import jax.scipy.special as jsp  # noqa: E402

scipy_special = pytest.importorskip("scipy.special")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402


@contextlib.contextmanager
def x64(enabled=True):
    with traxla.config.flag("enable_x64", enabled), jax.enable_x64(enabled):
        yield


def _dtypes(x64_mode):
    return (np.float64, np.complex128) if x64_mode else (np.float32, np.complex64)


# Real arguments across every branch: 0 and -0, the series (|x| <= 4 for sici, x^2 < 2.5625 for
# fresnel), the rational/asymptotic ranges, beyond 1e9 / 36974, negatives, +-inf and nan.
REALS = [0., -0., 1e-3, 0.3, 1., 1.6, 2.5, 4., 4.5, 7.9, 8.1, 12., 40., 1e5, 2e9, -1., -7.5,
         np.inf, -np.inf, np.nan]
COMPLEX = [0, 1, 1 + 1j, -2 + .5j, 3 - 2j, 10j, 5.5, -3 - 3j, 1e3 + 1e3j, .1 - .1j]
# (n, x) over every branch of expn: n = 0, x = 0 (n < 2 and n >= 2), series (x <= 1),
# continued fraction (x > 1), n >= 5000, and the nan cases (n < 0, x < 0, nan)
EXPN_N = [0, 1, 2, 3, 5, 10, 0, 1, 2, 3, 5000, 6000, -1, 2, 2, 1, 4]
EXPN_X = [0.5, 0.5, 0.5, 0.5, 2., 3., 0., 0., 0., 10., 1., 3., 1., -1., np.nan, 60., 1e-4]


def _all_functions(ns):
    def program(x, z, n, xn):
        return (*ns.fresnel(x), *ns.sici(x), ns.wofz(z), ns.wofz(x), ns.expn(n, xn))
    return program


# Compiling dominates: the value, edge, hypothesis, finite-difference and vmap tests all run
# the one program per library and precision below (same argument shapes, one compile).
_programs: dict = {}


def _run(ns, x64_mode, x, z, n, xn):
    real, cplx = _dtypes(x64_mode)
    key = (ns.__name__, x64_mode)
    if key not in _programs:
        _programs[key] = (traxla.jit if ns is tsp else jax.jit)(_all_functions(ns))
    with x64(x64_mode):
        outs = _programs[key](np.asarray(x, real), np.asarray(z, cplx), np.asarray(n, np.int32),
                              np.asarray(xn, real))
        return [np.asarray(o) for o in outs]


_outputs_cache: dict = {}


def _outputs(ns, x64_mode):
    key = (ns.__name__, x64_mode)
    if key not in _outputs_cache:
        _outputs_cache[key] = _run(ns, x64_mode, REALS, COMPLEX, EXPN_N, EXPN_X)
    return _outputs_cache[key]


def test_values_match_jax(jax_side):
    # JAX's side stored (tests/_jax_stored.py): compiling its program takes seconds
    got, want = _outputs(tsp, False), jax_side(lambda: _outputs(jsp, False))
    assert len(got) == len(want) == 7
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=2e-6, equal_nan=True)


def _check_against_scipy(outs, x, z, n, xn, rtol):
    s, c, si, ci, w_complex, w_real, e = outs
    x64_ = np.asarray(x, np.float64)
    want_s, want_c = scipy_special.fresnel(x64_)
    want_si, want_ci = scipy_special.sici(x64_)
    # (Ci has a zero near 0.616: an absolute tolerance too)
    for g, w in ((s, want_s), (c, want_c), (si, want_si), (ci, want_ci)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, equal_nan=True)
    np.testing.assert_allclose(w_complex, scipy_special.wofz(np.asarray(z, np.complex128)),
                               rtol=rtol * 10, atol=rtol, equal_nan=True)
    # (at +-inf JAX's rational approximation gives nan where SciPy gives 0: as JAX)
    finite = ~np.isinf(x64_)
    np.testing.assert_allclose(w_real[finite], scipy_special.wofz(x64_[finite] + 0j),
                               rtol=rtol * 10, atol=rtol, equal_nan=True)
    assert np.isnan(w_real[~finite]).all()
    n = np.asarray(n)
    xn = np.asarray(xn, np.float64)
    want_e = scipy_special.expn(n, xn)
    # JAX returns 1/n at x == 0 for n >= 2 where SciPy (and the math) give 1/(n - 1): as JAX
    want_e = np.where((xn == 0) & (n >= 2), 1. / np.maximum(n, 1), want_e)
    np.testing.assert_allclose(e, want_e, rtol=rtol * 10, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("x64_mode", [False, True], ids=["f32", "f64"])
def test_values_match_scipy(x64_mode):
    _check_against_scipy(_outputs(tsp, x64_mode), REALS, COMPLEX, EXPN_N, EXPN_X,
                         rtol=1e-13 if x64_mode else 2e-5)


def test_edge_values():
    s, c, si, ci, w_complex, w_real, e = _outputs(tsp, False)
    x = np.array(REALS, np.float32)
    signed_zero_or_inf = np.isin(x, [0., np.inf, -np.inf])
    np.testing.assert_array_equal(s[signed_zero_or_inf], [0., 0., .5, -.5])
    np.testing.assert_array_equal(c[signed_zero_or_inf], [0., 0., .5, -.5])
    np.testing.assert_array_equal(si[signed_zero_or_inf],
                                  np.array([0., 0., np.pi / 2, -np.pi / 2], np.float32))
    np.testing.assert_array_equal(ci[signed_zero_or_inf], [-np.inf, -np.inf, 0., np.nan])
    assert np.isnan(s[-1]) and np.isnan(ci[-1])
    np.testing.assert_allclose([w_complex[0], w_real[0]], [1, 1], rtol=2e-7)
    n, xn = np.array(EXPN_N), np.array(EXPN_X)
    np.testing.assert_array_equal(e[(xn == 0) & (n < 2)], np.inf)
    np.testing.assert_array_equal(e[(xn == 0) & (n >= 2)], 1. / n[(xn == 0) & (n >= 2)])
    assert np.isnan(e[(n < 0) | (xn < 0) | np.isnan(xn)]).all()


@settings(max_examples=8, deadline=None)
# (no subnormals: XLA's CPU kernels flush them to zero)
@given(st.lists(st.floats(-10., 10., width=32, allow_subnormal=False), min_size=len(REALS),
                max_size=len(REALS)),
       st.lists(st.floats(0.015625, 30., width=32), min_size=len(EXPN_X),
                max_size=len(EXPN_X)))
def test_random_values_against_scipy(xs, ys):
    n = np.abs(EXPN_N) % 50  # (orders >= 0 below the large-order branch)
    outs = _run(tsp, False, xs, COMPLEX, n, ys)
    _check_against_scipy(outs, np.float32(xs), COMPLEX, n, np.float32(ys), rtol=5e-5)


# -- dtypes and errors ---------------------------------------------------------------------------

def _avals(tree):
    return [(np.dtype(a.dtype), tuple(a.shape), bool(getattr(a, "weak_type", False)))
            for a in jax.tree_util.tree_leaves(tree)]


# (float16 cannot hold some of the constants: NumPy warns on the cast, in JAX too)
_F16_OVERFLOW = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")


@_F16_OVERFLOW
@pytest.mark.parametrize("arg", [np.float16(0.7), 0.7, 3, np.array([1, 2], np.int32),
                                 np.array([0.5, 2.], "bfloat16")],
                         ids=["f16", "py_float", "py_int", "i32", "bf16"])
@pytest.mark.parametrize("name", ["fresnel", "sici", "wofz"])
def test_dtypes_match_jax(name, arg):
    got = traxla.eval_shape(getattr(tsp, name), arg)
    want = jax.eval_shape(getattr(jsp, name), arg)
    assert _avals(got) == _avals(want)


@_F16_OVERFLOW
@pytest.mark.parametrize("args", [(2.5, 0.5), (3, np.float32(0.5)), (3, 2), (1, np.float16(0.5)),
                                  (np.array([1, 2]), np.array([[0.5], [2.]], np.float32))],
                         ids=["float_n", "int_n", "ints", "f16", "broadcast"])
def test_expn_promotion_and_broadcasting(args):
    assert _avals(traxla.eval_shape(tsp.expn, *args)) == _avals(jax.eval_shape(jsp.expn, *args))


def test_complex_inputs_are_refused():
    z = np.array([1 + 1j], np.complex64)
    with pytest.raises(ValueError, match="sici must be real-valued"):
        traxla.eval_shape(tsp.sici, z)
    with pytest.raises(NotImplementedError, match="complex-valued inputs"):
        traxla.eval_shape(tsp.fresnel, z)
    with pytest.raises(ValueError, match="expn does not support complex-valued inputs"):
        traxla.eval_shape(tsp.expn, 1, z)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        tsp.wofz("1")


# -- derivatives -----------------------------------------------------------------------------------

GRAD_POINTS = np.array([0.3, 1.1, 2.5, 5.5, 9.], np.float64)


def _gradients(ns, J):
    """d/dx of fresnel's S + C, sici's Si + Ci, Re wofz and expn(3, .), at each point."""
    def total(fn):
        return J.vmap(J.grad(lambda x: sum(v.real for v in fn(x))))
    return J.jit(lambda x: (total(lambda x: ns.fresnel(x))(x), total(lambda x: ns.sici(x))(x),
                            total(lambda x: (ns.wofz(x),))(x),
                            total(lambda x: (ns.expn(3, x),))(x)))


def test_grads_match_finite_differences():
    with x64():
        got = [np.asarray(g) for g in _gradients(tsp, traxla)(GRAD_POINTS)]
    # central differences through the value program (its shapes: padded with ones)
    h = 1e-6
    k = len(GRAD_POINTS)
    xs = [np.ones(len(REALS)), np.ones(len(EXPN_X))]
    up, down = ([np.concatenate([GRAD_POINTS + d, x[k:]]) for x in xs] for d in (h, -h))
    n = np.full(len(EXPN_N), 3)
    hi = _run(tsp, True, up[0], COMPLEX, n, up[1])
    lo = _run(tsp, True, down[0], COMPLEX, n, down[1])
    fd = [(hi[i] + hi[i + 1] - lo[i] - lo[i + 1])[:k] / (2 * h) for i in (0, 2)]
    fd += [((hi[i] - lo[i]).real[:k] / (2 * h)) for i in (5, 6)]
    for g, d in zip(got, fd):
        np.testing.assert_allclose(g, d, rtol=1e-6, atol=1e-8)


def test_wofz_complex_jvp():
    z = np.array([1 + 1j, -2 + .5j, 3 - 2j], np.complex128)
    t = np.array([1, 1j, .5 - .5j], np.complex128)
    with x64():
        out, tangent = traxla.jvp(traxla.jit(tsp.wofz), (z,), (t,))
    w = scipy_special.wofz(z)
    np.testing.assert_allclose(np.asarray(out), w, rtol=1e-13)
    # w'(z) = -2 z w(z) + 2i / sqrt(pi)
    np.testing.assert_allclose(np.asarray(tangent), (-2 * z * w + 2j / np.sqrt(np.pi)) * t,
                               rtol=1e-13)


# -- vmap ------------------------------------------------------------------------------------------

def test_vmap_is_stacking():
    """Every function batched over its rows; expn over its orders only (x unbatched)."""
    rows = (np.stack([REALS, REALS[::-1]]), np.stack([COMPLEX, COMPLEX[::-1]]),
            np.stack([EXPN_N, EXPN_N[::-1]]))
    batched = traxla.jit(traxla.vmap(_all_functions(tsp), (0, 0, 0, None)))(
        np.float32(rows[0]), np.complex64(rows[1]), np.int32(rows[2]), np.float32(EXPN_X))
    for i in range(2):
        row = _run(tsp, False, *(r[i] for r in rows), EXPN_X)
        for b, r in zip(batched, row):  # (batched kernels may round differently: an ulp)
            np.testing.assert_allclose(np.asarray(b)[i], r, rtol=1e-6, atol=1e-7)


# -- make_jaxpr text -------------------------------------------------------------------------------

_X3 = np.array([0.5, 1., 3.], np.float32)
JAXPR_PROGRAMS = {
    "fresnel": (lambda ns, J: ns.fresnel, (_X3,)),
    "sici": (lambda ns, J: ns.sici, (_X3,)),
    "wofz_real": (lambda ns, J: ns.wofz, (_X3,)),
    "wofz_complex": (lambda ns, J: ns.wofz, (_X3 + 1j * _X3[::-1],)),
    "wofz_python_scalar": (lambda ns, J: (lambda: ns.wofz(1.0)), ()),
    "expn": (lambda ns, J: ns.expn, (np.array([1, 2, 3], np.int32), _X3)),
    "expn_static_n": (lambda ns, J: (lambda x: ns.expn(2, x)), (_X3,)),
    "sici_weak": (lambda ns, J: (lambda x: ns.sici(x * 2.0)), (_X3,)),
    "grad_wofz": (lambda ns, J: J.grad(lambda x: ns.wofz(x).real.sum()), (_X3,)),
    "grad_fresnel": (lambda ns, J: J.grad(lambda x: sum(v.sum() for v in ns.fresnel(x))), (_X3,)),
    "grad_sici": (lambda ns, J: J.grad(lambda x: sum(v.sum() for v in ns.sici(x))), (_X3,)),
    "grad_expn": (lambda ns, J: J.grad(lambda x: ns.expn(3, x).sum()), (_X3,)),
    "vmap_expn": (lambda ns, J: J.vmap(ns.expn, (0, None)), (np.array([1, 2], np.int32), _X3)),
    # exp1 is expn(1, .), as in JAX (and expi uses it for negative x)
    "exp1": (lambda ns, J: ns.exp1, (_X3 - 1,)),
    "expi": (lambda ns, J: ns.expi, (_X3 - 1,)),
}
# name -> why traxla's text differs (xfail, strict)
KNOWN_DIFFERENCES = {
    "grad_fresnel": "JAX partially evaluates the jits a linearized custom_jvp rule calls (new, "
                    "separately printed jaxprs); traxla reuses the primal ones",
    "grad_sici": "JAX splits the jitted JVP rule (sici_jvp) into known and linear jits under "
                 "linearize; traxla traces it whole",
    "grad_expn": "JAX splits the jitted JVP rule (expn_jvp) into known and linear jits under "
                 "linearize; traxla traces it whole",
}


def _jaxpr_params():
    for name in JAXPR_PROGRAMS:
        for mode in ("f32", "f64"):
            marks = ()
            if name in KNOWN_DIFFERENCES:
                marks = pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name], strict=True)
            yield pytest.param(name, mode, id=f"{name}-{mode}", marks=marks)


@pytest.mark.parametrize("name,mode", list(_jaxpr_params()))
def test_jaxpr_text_matches_jax(name, mode):
    program, args = JAXPR_PROGRAMS[name]
    with x64(mode == "f64"):
        if mode == "f64":
            args = tuple(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
                         if isinstance(a, np.ndarray) and a.dtype.kind in "fc" else a
                         for a in args)
        want = str(jax.make_jaxpr(program(jsp, jax))(*args))
        got = str(traxla.make_jaxpr(program(tsp, traxla))(*args))
    assert got == want


def test_public_names():
    for name in ("expn", "fresnel", "sici", "wofz"):
        assert name in tsp.__all__
        assert getattr(tsp, name).__name__ == getattr(jsp, name).__name__
