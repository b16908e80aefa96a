"""FFT (issue #14): the ``fft`` primitive and all 18 ``traxla.numpy.fft`` names against
``numpy.fft`` (hypothesis over shapes, axes, lengths, norms and dtypes), gradients against
finite differences (float64), vmap against stacking, and errors."""
from __future__ import annotations

import numpy as np
import pytest

from test_conv import x64
import traxla
import traxla.lax as tlax
import traxla.numpy as tnp

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

NORMS = [None, "backward", "ortho", "forward"]


def _data(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


@st.composite
def fft_cases(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    name = draw(st.sampled_from(["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftn",
                                 "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2",
                                 "irfft2"]))
    if name.endswith("2") and ndim < 2:
        shape = (2,) + shape
        ndim += 1
    norm = draw(st.sampled_from(NORMS))
    real_input = name.startswith("r") or name == "ihfft"
    dtype = draw(st.sampled_from([np.float32, np.float64] if real_input
                                 else [np.complex64, np.complex128, np.float32]))
    kwargs = {"norm": norm}
    if name[-1] == "n":
        k = draw(st.integers(1, ndim))
        axes = tuple(draw(st.permutations(range(-ndim, 0)))[:k])
        kwargs["axes"] = axes
        if draw(st.booleans()):
            kwargs["s"] = tuple(draw(st.integers(2, 7)) for _ in axes)
    elif name[-1] == "2":
        kwargs["axes"] = draw(st.sampled_from([(-2, -1), (0, -1), (-1, 0)]))
        if draw(st.booleans()):
            kwargs["s"] = (draw(st.integers(2, 7)), draw(st.integers(2, 7)))
    else:
        kwargs["axis"] = draw(st.integers(-ndim, ndim - 1))
        if draw(st.booleans()):
            kwargs["n"] = draw(st.integers(2, 8))
    if name.startswith("irfft") or name == "hfft":
        # numpy needs >= 2 output points on the last transformed axis
        last = kwargs.get("axes", (kwargs.get("axis", -1),))[-1]
        shape = tuple(max(d, 2) if i == last % ndim else d for i, d in enumerate(shape))
    return name, shape, dtype, kwargs


@hypothesis.settings(max_examples=10, deadline=None)
@hypothesis.given(fft_cases(), st.integers(0, 2**31 - 1))
def test_numpy_fft_matches_numpy(case, seed):
    name, shape, dtype, kwargs = case
    x = _data(np.random.default_rng(seed), shape, dtype)
    with x64():
        got = getattr(tnp.fft, name)(x, **kwargs)
    want = getattr(np.fft, name)(x, **kwargs)
    single = dtype in (np.float32, np.complex64)
    tol = 2e-4 if single else 1e-10
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol * max(1, np.size(x)))
    got_dtype = np.asarray(got).dtype
    assert got_dtype.kind == np.asarray(want).dtype.kind
    # single precision stays single (as in JAX), where NumPy computes in double
    assert got_dtype.itemsize == (4 if single else 8) * (2 if got_dtype.kind == "c" else 1)


def test_freq_and_shift_helpers():
    for n in (1, 4, 7):
        np.testing.assert_allclose(np.asarray(tnp.fft.fftfreq(n, 0.5)), np.fft.fftfreq(n, 0.5),
                                   rtol=1e-6)
        np.testing.assert_allclose(np.asarray(tnp.fft.rfftfreq(n, 2.0)),
                                   np.fft.rfftfreq(n, 2.0), rtol=1e-6)
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(np.asarray(tnp.fft.fftshift(x, axes)),
                                      np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(tnp.fft.ifftshift(x, axes)),
                                      np.fft.ifftshift(x, axes))
    assert sorted(n for n in dir(tnp.fft) if not n.startswith("_") and n in dir(np.fft)) == \
        sorted(["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
                "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq",
                "fftshift", "ifftshift"])


def test_lax_fft_four_dimensions_split_like_jax():
    x = _data(np.random.default_rng(1), (2, 3, 2, 4, 3), np.complex64)
    np.testing.assert_allclose(np.asarray(tnp.fft.fftn(x, axes=(1, 2, 3, 4))),
                               np.fft.fftn(x, axes=(1, 2, 3, 4)), rtol=1e-4, atol=1e-4)
    y = np.random.default_rng(2).standard_normal((3, 2, 4, 4)).astype(np.float32)
    r = tnp.fft.rfftn(y)
    np.testing.assert_allclose(np.asarray(r), np.fft.rfftn(y), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(tnp.fft.irfftn(r, y.shape)), y, rtol=1e-4, atol=1e-4)


GRAD_FNS = {
    "fft": lambda x: tnp.fft.fft(x, axis=0).real * 1.5 + tnp.fft.fft(x).imag,
    "ifft_ortho": lambda x: tnp.fft.ifft2(x, norm="ortho").imag,
    "rfft": lambda x: tnp.concatenate([tnp.fft.rfft(x).imag.ravel(),
                                       tnp.fft.rfft(x, n=7, axis=0).real.ravel()]),
    "irfft": lambda x: tnp.fft.irfft(tnp.fft.rfft(x) * (1 + 2j), n=6),
    "rfft2_irfft2": lambda x: tnp.fft.irfft2(tnp.fft.rfft2(x, norm="forward") ** 2, s=(4, 6)),
}


def _fd_jvp_vjp(f):
    """One compiled program per function: f at x +- eps v, the JVP along v and the VJP of
    ct (eagerly, every transposed primitive would compile on its own)."""
    def run(x, plus, minus, v, ct):
        _, vjp = traxla.vjp(f, x)
        return f(plus), f(minus), traxla.jvp(f, (x,), (v,))[1], vjp(ct)[0]
    return traxla.jit(run)


@pytest.mark.parametrize("name", list(GRAD_FNS))
def test_fft_gradients_match_finite_differences(name):
    """<ct, J v> from jvp and from finite differences, and <vjp(ct), v> equal to it (as
    test_conv's _numeric_vjp_check, in one jitted program)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6))
    eps = tol = 1e-6
    f = GRAD_FNS[name]
    with x64():
        out = traxla.eval_shape(f, x)
        ct = rng.standard_normal(out.shape)
        v = rng.standard_normal(x.shape)
        plus, minus, tangent, grad = _fd_jvp_vjp(f)(x, x + eps * v, x - eps * v, v, ct)
    fd = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), fd, rtol=tol, atol=tol)
    np.testing.assert_allclose(np.vdot(np.asarray(grad), v), np.vdot(ct, fd), rtol=tol, atol=tol)


@pytest.mark.parametrize("fft_type,dtype", [("fft", np.complex64), ("ifft", np.complex64),
                                            ("rfft", np.float32), ("irfft", np.complex64)])
def test_vmap_fft_equals_stacking(fft_type, dtype):
    rng = np.random.default_rng(4)
    xs = _data(rng, (3, 4, 5), dtype)
    lengths = (4, 8) if fft_type == "irfft" else (4, 5)

    def f(x):
        return tlax.fft(x, fft_type, lengths)
    for axis in (0, 2):
        batched = np.moveaxis(xs, 0, axis)
        got = traxla.vmap(f, in_axes=axis)(batched)
        want = np.stack([np.asarray(f(x)) for x in xs])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


def test_fft_errors():
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        tlax.fft(np.ones(4, np.complex64), "rfft", (4,))
    with pytest.raises(ValueError, match="Unknown FFT type 'dft'"):
        tlax.fft(np.ones(4, np.complex64), "dft", (4,))
    with pytest.raises(ValueError, match=r"FFT input shape \(4,\) minor dimensions must be "
                                         r"equal to fft_lengths \(5,\)"):
        tlax.fft(np.ones(4, np.complex64), "fft", (5,))
    with pytest.raises(ValueError, match="must have at least as many input dimensions"):
        tlax.fft(np.ones(4, np.complex64), "fft", (1, 4))
    with pytest.raises(ValueError, match="Invalid norm value"):
        tnp.fft.fft(np.ones(4), norm="unitary")
    with pytest.raises(ValueError, match="does not support repeated axes"):
        tnp.fft.fftn(np.ones((2, 2)), axes=(0, 0))
    with pytest.raises(ValueError, match="does not support multiple axes"):
        tnp.fft.fft(np.ones((2, 2)), axis=(0, 1))
    with pytest.raises(ValueError, match="Shape should be positive"):
        tnp.fft.fft(np.ones(4), n=0)
    # an integer array is converted (JAX does not refuse it)
    np.testing.assert_allclose(np.asarray(tnp.fft.fft(np.arange(4))), np.fft.fft(np.arange(4)),
                               atol=1e-5)
