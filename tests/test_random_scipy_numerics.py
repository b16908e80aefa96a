"""Issue #16b numerics: the special functions and distributions against SciPy (hypothesis over
values), gradients against finite differences in float64 (gamma's implicit-reparameterization
gradient included), scipy.optimize/integrate/ndimage against SciPy and JAX, and
example_libraries training against JAX's."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
import traxla.random as tr
import traxla.scipy.integrate
import traxla.scipy.ndimage
import traxla.scipy.optimize
import traxla.scipy.special as tsp
import traxla.scipy.stats as tst

scipy = pytest.importorskip("scipy")
import scipy.integrate  # noqa: E402
import scipy.ndimage  # noqa: E402
import scipy.special as ssp  # noqa: E402
import scipy.stats as sst  # noqa: E402

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

f32 = np.float32


@contextlib.contextmanager
def x64():
    old = traxla.config.enable_x64
    traxla.config.update("enable_x64", True)
    try:
        yield
    finally:
        traxla.config.update("enable_x64", old)


_positive = st.floats(0.0625, 30., width=32)
_unit = st.floats(0.015625, 0.984375, width=32)
_vec = st.lists(_positive, min_size=4, max_size=4)

# Every function here runs in one jitted program per example (one compile per example shape:
# the shapes are fixed, so hypothesis's examples reuse it).
_SPECIAL = {
    "gammainc": (lambda a, x, u: tsp.gammainc(a, x), lambda a, x, u: ssp.gammainc(a, x)),
    "gammaincc": (lambda a, x, u: tsp.gammaincc(a, x), lambda a, x, u: ssp.gammaincc(a, x)),
    "betainc": (lambda a, x, u: tsp.betainc(a, x, u), lambda a, x, u: ssp.betainc(a, x, u)),
    "betaln": (lambda a, x, u: tsp.betaln(a, x), lambda a, x, u: ssp.betaln(a, x)),
    "polygamma1": (lambda a, x, u: tsp.polygamma(tnp.ones(4, "int32"), a),
                   lambda a, x, u: ssp.polygamma(1, a)),
    "zeta": (lambda a, x, u: tsp.zeta(a + 1.5, x), lambda a, x, u: ssp.zeta(a + 1.5, x)),
    "i0e": (lambda a, x, u: tsp.i0e(a - 10), lambda a, x, u: ssp.i0e(a - 10)),
    "i1e": (lambda a, x, u: tsp.i1e(a - 10), lambda a, x, u: ssp.i1e(a - 10)),
    # (float32 erfc underflows past x ~ 9 before the asymptotic branch takes over, in JAX too)
    "erfcx": (lambda a, x, u: tsp.erfcx(u * 10 - 3), lambda a, x, u: ssp.erfcx(u * 10 - 3)),
    "poch": (lambda a, x, u: tsp.poch(u * 3, u), lambda a, x, u: ssp.poch(u * 3, u)),
    "expi": (lambda a, x, u: tsp.expi(a - 4.9), lambda a, x, u: ssp.expi(a - 4.9)),
    "exp1": (lambda a, x, u: tsp.exp1(x), lambda a, x, u: ssp.exp1(x)),
    "spence": (lambda a, x, u: tsp.spence(x), lambda a, x, u: ssp.spence(x)),
    "dawsn": (lambda a, x, u: tsp.dawsn(a - 10), lambda a, x, u: ssp.dawsn(a - 10)),
    "rel_entr": (lambda a, x, u: tsp.rel_entr(a, x), lambda a, x, u: ssp.rel_entr(a, x)),
    "t.logpdf": (lambda a, x, u: tst.t.logpdf(u, a), lambda a, x, u: sst.t.logpdf(u, a)),
    "gamma.cdf": (lambda a, x, u: tst.gamma.cdf(x, a), lambda a, x, u: sst.gamma.cdf(x, a)),
    "beta.cdf": (lambda a, x, u: tst.beta.cdf(u, a, x), lambda a, x, u: sst.beta.cdf(u, a, x)),
    "chi2.sf": (lambda a, x, u: tst.chi2.sf(x, a), lambda a, x, u: sst.chi2.sf(x, a)),
    "poisson.cdf": (lambda a, x, u: tst.poisson.cdf(tnp.floor(x), a),
                    lambda a, x, u: sst.poisson.cdf(np.floor(x), a)),
    "nbinom.logpmf": (lambda a, x, u: tst.nbinom.logpmf(tnp.floor(x), a, u),
                      lambda a, x, u: sst.nbinom.logpmf(np.floor(x), a, u)),
    "vonmises.logpdf": (lambda a, x, u: tst.vonmises.logpdf(u, a),
                        lambda a, x, u: sst.vonmises.logpdf(u, a)),
}
_special_jit = traxla.jit(lambda a, x, u: [fn(a, x, u) for fn, _ in _SPECIAL.values()])


@settings(max_examples=8, deadline=None)
@given(_vec, _vec, st.lists(_unit, min_size=4, max_size=4))
def test_special_functions_and_distributions_match_scipy(a, x, u):
    a, x, u = (np.array(v, f32) for v in (a, x, u))
    got = _special_jit(a, x, u)
    for (name, (_, ref)), g in zip(_SPECIAL.items(), got):
        want = ref(a.astype(np.float64), x.astype(np.float64), u.astype(np.float64))
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-4, atol=2e-5, err_msg=name)


def _fd(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


def test_gradients_match_finite_differences_in_float64():
    with x64():
        a = np.array([0.7, 1.5, 4.0])
        x = np.array([0.4, 2.0, 3.5])
        key = tr.key(3)
        # A sample's gradient is the implicit one: d x / d a = -(dF/da) / (dF/dx) at the sample
        # (F the gamma CDF), here with dF/da by finite differences of SciPy's CDF. (One jitted
        # program for both samplers' samples and gradients: each compile takes seconds.)
        samplers = ((tr.gamma, lambda s: s), (tr.loggamma, np.exp))
        samples_and_grads = traxla.jit(lambda a: [
            (sampler(key, a, dtype="float64"),
             traxla.grad(lambda a: tnp.sum(sampler(key, a, dtype="float64")))(a))
            for sampler, _ in samplers])(a)
        for (sampler, to_x), (sample, grad) in zip(samplers, samples_and_grads, strict=True):
            x_s, grad = to_x(np.asarray(sample)), np.asarray(grad)
            dcdf_da = (ssp.gammainc(a + 1e-6, x_s) - ssp.gammainc(a - 1e-6, x_s)) / 2e-6
            implicit = -dcdf_da / sst.gamma.pdf(x_s, a)
            if sampler is tr.loggamma:
                implicit = implicit / x_s
            np.testing.assert_allclose(grad, implicit, rtol=1e-5, err_msg=sampler.__name__)
        checks = {
            "igamma in a": lambda a: tnp.sum(traxla.lax.igamma(a, x)),
            "igammac in x": lambda a: tnp.sum(traxla.lax.igammac(x, a)),
            "betainc in x": lambda a: tnp.sum(traxla.lax.betainc(x, x + 1, a / 5)),
            "i0e/i1e": lambda a: tnp.sum(tsp.i0e(a) * tsp.i1e(a)),
            "digamma": lambda a: tnp.sum(tsp.digamma(a)),
            "beta.logpdf": lambda a: tnp.sum(tst.beta.logpdf(a / 5, x, x + 1)),
        }
        # one jitted program for all the gradients, one for all the values
        grads = traxla.jit(lambda a: [traxla.grad(f)(a) for f in checks.values()])(a)
        f_jit = traxla.jit(lambda v: [f(v) for f in checks.values()])
        fds = _fd(lambda v: np.array([float(y) for y in f_jit(v)]), a)
        for i, (name, grad) in enumerate(zip(checks, grads, strict=True)):
            np.testing.assert_allclose(np.asarray(grad), fds[:, i], rtol=1e-5, atol=1e-7,
                                       err_msg=name)


def test_gamma_samples_follow_the_gamma_distribution():
    samples = np.asarray(tr.gamma(tr.key(0), np.float32(2.5), (4000,)))
    assert sst.kstest(samples, sst.gamma(2.5).cdf).pvalue > 1e-3


def test_minimize_bfgs_matches_scipy():
    def fun(np_):
        return lambda x: np_.sum((x - np_.arange(3.)) ** 2 * np_.arange(1., 4.)) + np_.sum(x ** 4)
    x0 = np.zeros(3, f32)
    got = traxla.scipy.optimize.minimize(fun(tnp), x0, method="BFGS")
    want = scipy.optimize.minimize(fun(np), x0.astype(np.float64), method="BFGS")
    assert bool(got.success)
    np.testing.assert_allclose(np.asarray(got.x), want.x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(float(got.fun), want.fun, rtol=1e-5)
    with pytest.raises(ValueError, match="Method foo not recognized"):
        traxla.scipy.optimize.minimize(fun(tnp), x0, method="foo")


def test_trapezoid_and_map_coordinates_match_scipy():
    y = np.sin(np.linspace(0, 3, 11)).astype(f32)
    x = np.linspace(0, 3, 11).astype(f32)
    np.testing.assert_allclose(float(traxla.scipy.integrate.trapezoid(y, x)),
                               scipy.integrate.trapezoid(y, x), rtol=1e-6)
    img = np.arange(20., dtype=f32).reshape(4, 5)
    coords = [np.array([0.5, 1.7, -0.3, 3.9], f32), np.array([0.2, 4.5, 2., -1.], f32)]
    for mode, smode in (("nearest", "nearest"), ("wrap", "grid-wrap"), ("mirror", "mirror"),
                        ("constant", "grid-constant")):
        got = traxla.scipy.ndimage.map_coordinates(img, coords, 1, mode)
        want = scipy.ndimage.map_coordinates(img, coords, order=1, mode=smode)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5, err_msg=mode)


def test_stax_and_optimizers_train_as_jax_does(jax_side):
    jax = pytest.importorskip("jax")
    import jax.example_libraries.optimizers as jo
    import jax.example_libraries.stax as js
    import jax.numpy as jnp
    import jax.random as jr
    from traxla.example_libraries import optimizers as to, stax as ts

    def run(stax, optimizers, random, lib, np_):
        init, apply = stax.serial(stax.Dense(8), stax.Relu, stax.Dense(3), stax.LogSoftmax)
        _, params = init(random.key(0), (-1, 5))
        x = np.random.RandomState(0).randn(6, 5).astype(f32)
        y = np.eye(3, dtype=f32)[np.arange(6) % 3]

        def loss(p):
            return -np_.mean(np_.sum(apply(p, x) * y, -1))
        opt_init, opt_update, get_params = optimizers.adam(1e-2)
        state = opt_init(params)
        step = lib.jit(lambda i, s: opt_update(i, lib.grad(loss)(get_params(s)), s))
        for i in range(3):
            state = step(i, state)
        return float(loss(get_params(state)))

    # JAX's side stored (tests/_jax_stored.py): it compiles op by op, seconds in all
    want = jax_side(lambda: run(js, jo, jr, jax, jnp))
    assert run(ts, to, tr, traxla, tnp) == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("name,args", [
    ("sgd", (0.1,)), ("momentum", (0.1, 0.9)), ("nesterov", (0.1, 0.9)), ("adagrad", (0.1,)),
    ("rmsprop", (0.1,)), ("rmsprop_momentum", (0.1,)), ("adam", (0.1,)), ("adamax", (0.1,)),
    ("sm3", (0.1,))])
def test_each_optimizer_steps_as_jax_does(name, args, jax_side):
    pytest.importorskip("jax")
    import jax.example_libraries.optimizers as jo
    from traxla.example_libraries import optimizers as to
    params = {"w": np.array([[0.5, -1.], [2., 0.25]], f32), "b": np.array([0.1, -0.3], f32)}
    grads = {"w": np.array([[0.2, 0.], [-1., 3.]], f32), "b": np.array([-0.5, 0.7], f32)}

    def run(optimizers):
        init, update, get_params = getattr(optimizers, name)(*args)
        state = init(params)
        for i in range(2):
            state = update(i, grads, state)
        return get_params(state)
    got, want = run(to), jax_side(lambda: run(jo))  # JAX's side stored
    for k in params:
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-6, err_msg=k)


def test_stax_conv_layers_as_jax(jax_side):
    jax = pytest.importorskip("jax")
    import jax.example_libraries.stax as js
    import jax.random as jr
    from traxla.example_libraries import stax as ts
    x = np.random.RandomState(1).randn(1, 5, 5, 2).astype(f32)

    def run(stax, random, layer, args):
        init, apply = getattr(stax, layer)(*args)
        shape, params = init(random.key(0), x.shape)
        return shape, np.asarray(apply(params, x))
    for layer, args in (("Conv", (3, (2, 2), (1, 2), "SAME")),
                        ("ConvTranspose", (3, (2, 2), (2, 1), "VALID"))):
        (got_shape, got) = run(ts, tr, layer, args)
        (want_shape, want) = jax_side(lambda: run(js, jr, layer, args))  # stored
        assert tuple(got_shape) == tuple(want_shape), layer
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=layer)


def test_dot_product_attention_errors_as_jax():
    q = np.zeros((1, 2, 4, 8), f32)
    kv = np.zeros((1, 3, 3, 8), f32)
    with pytest.raises(ValueError, match="must be a multiple of key/value heads"):
        traxla.nn.dot_product_attention(q, kv, kv)
    with pytest.raises(ValueError, match="Unsupported implementation option"):
        traxla.nn.dot_product_attention(q, q, q, implementation="foo")


def test_sampler_argument_errors_as_jax():
    with pytest.raises(ValueError, match="dtype argument to `pareto` must be a float"):
        tr.pareto(tr.key(0), 2., (2,), dtype="int32")
    with pytest.raises(ValueError, match="dirichlet requires alpha.ndim >= 1"):
        tr.dirichlet(tr.key(0), np.float32(1.))
    with pytest.raises(TypeError, match="random_gamma takes a key array operand"):
        tr.random_gamma_p.bind(np.zeros(2, np.uint32), np.ones(2, f32), log_space=False)


_has_linalg = hasattr(getattr(traxla.lax, "linalg", None), "cholesky") and hasattr(
    getattr(tnp, "linalg", None), "qr") and hasattr(tnp, "vectorize")
_has_unique = hasattr(tnp, "unique") and hasattr(tnp, "nonzero") and hasattr(
    tnp, "apply_along_axis")


@pytest.mark.skipif(not _has_linalg, reason="needs the linalg helper's cholesky/qr (issue 13)")
def test_linalg_based_samplers_and_densities_match_jax(jax_side):
    pytest.importorskip("jax")
    rng = np.random.RandomState(0)
    a = rng.randn(3, 3).astype(f32)
    cov = a @ a.T + np.eye(3, dtype=f32)
    mean = rng.randn(3).astype(f32)
    x = rng.randn(4, 3).astype(f32)

    def theirs():  # stored (tests/_jax_stored.py): JAX compiles each op, seconds each
        import jax.nn.initializers as ji
        import jax.random as jr
        import jax.scipy.stats as jst
        return (jst.multivariate_normal.logpdf(x, mean, cov),
                [(jr.multivariate_normal(jr.key(key), mean, cov, (2,)), jr.orthogonal(jr.key(key), 3),
                  ji.delta_orthogonal()(jr.key(key), (3, 3, 4))) for key in (0, 5)])
    want_logpdf, want_draws = jax_side(theirs)
    np.testing.assert_allclose(np.asarray(tst.multivariate_normal.logpdf(x, mean, cov)),
                               want_logpdf, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(tst.multivariate_normal.logpdf(x, mean, cov)),
                               sst.multivariate_normal.logpdf(x, mean, cov), rtol=1e-5)
    for key, (want_mvn, want_orth, want_delta) in zip((0, 5), want_draws, strict=True):
        np.testing.assert_array_equal(tr.multivariate_normal(tr.key(key), mean, cov, (2,)), want_mvn)
        np.testing.assert_array_equal(tr.orthogonal(tr.key(key), 3), want_orth)
        np.testing.assert_array_equal(
            traxla.nn.initializers.delta_orthogonal()(tr.key(key), (3, 3, 4)), want_delta)


@pytest.mark.skipif(not _has_unique, reason="needs traxla.numpy.unique/nonzero (issue 16a)")
def test_mode_and_rankdata_match_jax(jax_side):
    pytest.importorskip("jax")
    x = np.array([[1, 2, 2, 3], [4, 4, 1, 1], [0, 5, 5, 5]], f32)
    methods = ("average", "min", "max", "dense", "ordinal")

    def theirs():  # stored (tests/_jax_stored.py): JAX compiles each op, seconds each
        import jax.scipy.stats as jst
        want = jst.mode(x, axis=1)
        return want.mode, want.count, [jst.rankdata(x, method, axis=1) for method in methods]
    want_mode, want_count, want_ranks = jax_side(theirs)
    got = tst.mode(x, axis=1)
    np.testing.assert_array_equal(got.mode, want_mode)
    np.testing.assert_array_equal(got.count, want_count)
    for method, want in zip(methods, want_ranks, strict=True):
        np.testing.assert_array_equal(tst.rankdata(x, method, axis=1), want)
