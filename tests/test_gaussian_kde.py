"""``traxla.scipy.stats.gaussian_kde`` against ``scipy.stats.gaussian_kde`` (values) and
JAX 0.10.2's (bit-exact values, resamples for a key, jaxprs)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as sps

import jax
from jax.scipy.stats import gaussian_kde as jax_kde

import traxla
from traxla import numpy as tnp
from traxla.scipy.stats import gaussian_kde

RNG = np.random.default_rng(0)
DATA_1D = RNG.normal(size=6).astype(np.float32)
DATA_2D = RNG.normal(size=(2, 7)).astype(np.float32)
POINTS_2D = RNG.normal(size=(2, 3)).astype(np.float32)
WEIGHTS = RNG.uniform(0.5, 1.5, size=7).astype(np.float32)

BANDWIDTHS = {"default": {}, "scott": {"bw_method": "scott"},
              "silverman": {"bw_method": "silverman"}, "scalar": {"bw_method": 0.4},
              "callable": {"bw_method": lambda kde: 0.5 * kde.neff ** (-1. / (kde.d + 4))},
              "weights": {"weights": WEIGHTS}}


def _densities(kde_class):
    """Every bandwidth case built and evaluated in one jitted program (a KDE is a pytree):
    eager, each step of each case would compile on its own."""
    def run(data, points):
        out = {}
        for case, kw in BANDWIDTHS.items():
            kde = kde_class(data, **kw)
            out[case] = (kde, kde.evaluate(points), kde.logpdf(points), kde(points),
                         kde.pdf(points))
        return out
    return run


def test_density_matches_scipy_and_jax(jax_side):
    ours_all = traxla.jit(_densities(gaussian_kde))(DATA_2D, POINTS_2D)
    # JAX's side stored (tests/_jax_stored.py): its values without the KDE objects
    theirs_all = jax_side(lambda: {case: list(v[1:]) for case, v in
                                   jax.jit(_densities(jax_kde))(DATA_2D, POINTS_2D).items()})
    for case, kw in BANDWIDTHS.items():
        (kde, *ours), theirs = ours_all[case], theirs_all[case]
        reference = sps.gaussian_kde(DATA_2D.astype(np.float64), **kw)
        np.testing.assert_allclose(ours[0], reference.evaluate(POINTS_2D), rtol=2e-5)
        np.testing.assert_allclose(ours[1], reference.logpdf(POINTS_2D), rtol=2e-5, atol=1e-6)
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(o), np.asarray(t))
        np.testing.assert_allclose(kde.covariance, reference.covariance, rtol=2e-5)
        np.testing.assert_allclose(kde.neff, reference.neff, rtol=1e-5)


def test_one_dimensional_data_and_integrals(jax_side):
    reference = sps.gaussian_kde(DATA_1D.astype(np.float64))
    x = np.linspace(-1, 1, 4).astype(np.float32)
    other_data = DATA_1D[:4] + 0.3

    def run(kde_class, data, other_data, x):
        kde = kde_class(data)
        return (kde(x), kde.integrate_box_1d(-0.5, 1.0), kde.integrate_gaussian(0.2, 0.7),
                kde.integrate_kde(kde_class(other_data)))
    ours = traxla.jit(lambda *a: run(gaussian_kde, *a))(DATA_1D, other_data, x)
    theirs = jax_side(lambda: jax.jit(lambda *a: run(jax_kde, *a))(DATA_1D, other_data, x))
    np.testing.assert_allclose(ours[0], reference(x), rtol=2e-5)
    np.testing.assert_allclose(ours[1], reference.integrate_box_1d(-0.5, 1.0), rtol=1e-5)
    np.testing.assert_allclose(ours[2], reference.integrate_gaussian(0.2, 0.7), rtol=1e-5)
    np.testing.assert_allclose(ours[3], reference.integrate_kde(
        sps.gaussian_kde(other_data.astype(np.float64))), rtol=1e-5)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)
    kde = gaussian_kde(DATA_1D)  # eager, as users call it
    assert (kde.d, kde.n) == (1, 6)
    np.testing.assert_allclose(kde.integrate_box_1d(-0.5, 1.0), ours[1], rtol=1e-6)


def test_integrate_gaussian_and_kde_in_two_dimensions():
    reference = sps.gaussian_kde(DATA_2D.astype(np.float64), weights=WEIGHTS)
    mean, cov = np.array([0.1, -0.2], np.float32), np.array([[1., .2], [.2, .5]], np.float32)
    other_data = DATA_2D[:, :5] * 1.5

    @traxla.jit
    def run(data, weights, mean, cov, other_data):
        kde = gaussian_kde(data, weights=weights)
        return kde.integrate_gaussian(mean, cov), kde.integrate_kde(gaussian_kde(other_data))
    gaussian, product = run(DATA_2D, WEIGHTS, mean, cov, other_data)
    np.testing.assert_allclose(gaussian, reference.integrate_gaussian(mean, cov), rtol=1e-5)
    np.testing.assert_allclose(product, reference.integrate_kde(sps.gaussian_kde(
        other_data.astype(np.float64))), rtol=1e-5)


def test_resample_is_bit_exact_with_jax(jax_side):
    def run(kde_class, data, weights, key):
        return kde_class(data, weights=weights).resample(key, (4,))
    sample = traxla.jit(lambda *a: run(gaussian_kde, *a))(DATA_2D, WEIGHTS, traxla.random.key(3))
    assert sample.shape == (2, 4)
    np.testing.assert_array_equal(sample, jax_side(lambda: jax.jit(lambda *a: run(jax_kde, *a))(
        DATA_2D, WEIGHTS, jax.random.key(3))))


def test_pytree_jit_and_vmap():
    kde = gaussian_kde(DATA_2D)
    leaves, treedef = traxla.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    rebuilt = traxla.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(rebuilt, gaussian_kde)
    jitted = traxla.jit(lambda k, x: k.logpdf(x))(kde, POINTS_2D)
    np.testing.assert_allclose(jitted, kde.logpdf(POINTS_2D), rtol=1e-6)
    per_point = traxla.vmap(lambda p: kde.evaluate(p[:, None])[0], in_axes=1)(POINTS_2D)
    np.testing.assert_allclose(per_point, kde.evaluate(POINTS_2D), rtol=1e-6)
    # a (d,)-vector is read as one point
    np.testing.assert_allclose(kde.evaluate(POINTS_2D[:, 0]), kde.evaluate(POINTS_2D)[:1],
                               rtol=1e-6)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="multiple elements"):
        gaussian_kde(np.ones(1, np.float32))
    with pytest.raises(NotImplementedError, match="complex data"):
        gaussian_kde(np.ones(3, np.complex64))
    with pytest.raises(ValueError, match="`bw_method` should be"):
        gaussian_kde(DATA_1D, bw_method="bogus")
    with pytest.raises(ValueError, match="should be of length n"):
        gaussian_kde(DATA_2D, weights=np.ones(3, np.float32))
    with pytest.raises(ValueError, match="one-dimensional"):
        gaussian_kde(DATA_2D, weights=np.ones((7, 1), np.float32))
    kde = gaussian_kde(DATA_2D)
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        kde.evaluate(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="only handles 1D"):
        kde.integrate_box_1d(0., 1.)
    with pytest.raises(ValueError, match="not the same dimensionality"):
        kde.integrate_kde(gaussian_kde(DATA_1D))
    with pytest.raises(ValueError, match="mean does not have dimension 2"):
        kde.integrate_gaussian(np.zeros(3), np.eye(2))
    with pytest.raises(NotImplementedError, match="dynamically changing the bandwidth"):
        kde.set_bandwidth("scott")
    with pytest.raises(NotImplementedError, match="use `integrate_box_1d`"):
        kde.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(TypeError):
        gaussian_kde([1.0, 2.0, 3.0])  # lists are not arrays, as in JAX


@pytest.mark.parametrize("method", ["logpdf", "evaluate"])
def test_jaxpr_matches_jax(method, jax_side):
    # JAX's text stored (tests/_jax_stored.py): building JAX's kde compiles its ops one by one
    want = jax_side(lambda: str(jax.make_jaxpr(getattr(jax_kde(DATA_2D), method))(POINTS_2D)))
    assert str(traxla.make_jaxpr(getattr(gaussian_kde(DATA_2D), method))(POINTS_2D)) == want


def test_jitted_methods_accept_traced_kde():
    kde = gaussian_kde(DATA_1D)
    f = traxla.jit(lambda k: k.integrate_box_1d(-1.0, 1.0))
    np.testing.assert_allclose(f(kde), kde.integrate_box_1d(-1.0, 1.0), rtol=1e-6)
    assert float(tnp.sum(kde.weights)) == pytest.approx(1.0)
