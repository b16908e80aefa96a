"""``traxla.image`` (issue #14): ``resize`` with every method (up- and downsampling, with
and without antialiasing) and ``scale_and_translate`` give JAX's results; resizing is
differentiable and vmappable."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.image as timage

jax = pytest.importorskip("jax")
import jax.image as jimage  # noqa: E402

METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]
_X = np.random.default_rng(0).standard_normal((2, 9, 7, 3)).astype(np.float32)


@pytest.mark.parametrize("method", METHODS)
def test_resize_matches_jax(method, jax_side):
    """Downsampling H and upsampling W at once; without antialiasing too where it matters
    (the kernel widens only when downsampling; cubic-pytorch then pads the edges)."""
    for antialias in ((True, False) if method in ("linear", "cubic-pytorch") else (True,)):
        got = timage.resize(_X, (2, 5, 12, 3), method, antialias)
        want = jax_side(lambda: jimage.resize(_X, (2, 5, 12, 3), method, antialias))
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_resize_against_an_independent_linear_reference():
    """Half-pixel-centred linear upsampling by 2 of a 1-D ramp, computed by hand."""
    x = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    got = np.asarray(timage.resize(x, (8,), "linear"))
    centres = (np.arange(8) + 0.5) / 2 - 0.5
    np.testing.assert_allclose(got, np.interp(centres, np.arange(4), x), atol=1e-6)


def test_scale_and_translate_matches_jax_and_is_differentiable():
    scale = np.array([1.5, 0.8], np.float32)
    translation = np.array([0.5, -1.0], np.float32)
    got = traxla.jit(lambda x, s, t: timage.scale_and_translate(
        x, (2, 12, 6, 3), (1, 2), s, t, "lanczos3"))(_X, scale, translation)
    want = jax.jit(lambda x, s, t: jimage.scale_and_translate(
        x, (2, 12, 6, 3), (1, 2), s, t, "lanczos3"))(_X, scale, translation)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
    f = lambda x, s: timage.scale_and_translate(  # noqa: E731
        x, (2, 12, 6, 3), (1, 2), s, translation, "linear").sum()
    jf = lambda x, s: jimage.scale_and_translate(  # noqa: E731
        x, (2, 12, 6, 3), (1, 2), s, translation, "linear").sum()
    got = traxla.jit(traxla.grad(f, argnums=(0, 1)))(_X, scale)
    want = jax.jit(jax.grad(jf, argnums=(0, 1)))(_X, scale)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-4)


def test_vmap_resize_equals_stacking():
    f = lambda x: timage.resize(x, (4, 10, 3), "cubic")  # noqa: E731
    got = traxla.vmap(f)(_X)
    want = np.stack([np.asarray(traxla.jit(f)(x)) for x in _X])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_image_errors():
    with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
        timage.resize(_X, (2, 4, 4, 3), "bogus")
    with pytest.raises(ValueError, match="shape must have length equal"):
        timage.resize(_X, (4, 4), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently"):
        timage.scale_and_translate(_X, _X.shape, (1,), [1.0], [0.0], "nearest")
