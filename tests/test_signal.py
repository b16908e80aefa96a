"""``jnp.convolve``/``jnp.correlate``, ``traxla.scipy.signal`` and ``traxla.scipy.fft``
(issue #14) against NumPy / SciPy, over random sizes, modes and dtypes (hypothesis)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from test_conv import x64
import traxla
import traxla.numpy as tnp
import traxla.scipy.fft as tfft
import traxla.scipy.signal as tsig

scipy_signal = pytest.importorskip("scipy.signal")
scipy_fft = pytest.importorskip("scipy.fft")
hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

MODES = ["full", "same", "valid"]


def _jit(fn, **kwargs):
    """One compiled program per call (eager op-by-op evaluation compiles every primitive of
    these composite functions separately)."""
    return traxla.jit(functools.partial(fn, **kwargs))


def _close(got, want, tol):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


@hypothesis.settings(max_examples=6, deadline=None)
@hypothesis.given(st.integers(1, 9), st.integers(1, 9), st.sampled_from(MODES),
                  st.sampled_from([np.float32, np.float64, np.complex64]),
                  st.integers(0, 2**31 - 1))
def test_numpy_convolve_and_correlate_match_numpy(n, m, mode, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n).astype(dtype)
    v = (rng.standard_normal(m) + (1j * rng.standard_normal(m) if dtype == np.complex64
                                   else 0)).astype(dtype)
    tol = 1e-5 if dtype != np.float64 else 1e-12
    with x64():  # both in one compiled program
        conv, corr = traxla.jit(lambda a, v: (tnp.convolve(a, v, mode=mode),
                                              tnp.correlate(a, v, mode=mode)))(a, v)
    _close(conv, np.convolve(a, v, mode=mode), tol)
    _close(corr, np.correlate(a, v, mode=mode), tol)


@hypothesis.settings(max_examples=6, deadline=None)
@hypothesis.given(st.integers(1, 3), st.sampled_from(MODES), st.booleans(),
                  st.sampled_from([np.float32, np.float64]), st.integers(0, 2**31 - 1))
def test_scipy_signal_convolutions_match_scipy(ndim, mode, swap, dtype, seed):
    rng = np.random.default_rng(seed)
    big = tuple(rng.integers(3, 7, ndim))
    small = tuple(rng.integers(1, 4, ndim))
    a, b = rng.standard_normal(big).astype(dtype), rng.standard_normal(small).astype(dtype)
    if swap:
        a, b = b, a
    tol = 2e-5 if dtype == np.float32 else 1e-11
    names = ["convolve", "correlate", "fftconvolve"]
    if ndim == 2:
        names += ["convolve2d"] + (["correlate2d"] if mode != "valid" or not swap else [])

    def all_of_them(a, b):  # one compiled program per example
        return ([getattr(tsig, name)(a, b, mode=mode) for name in names]
                + [tsig.convolve(a, b, mode=mode, method="fft")])
    with x64():
        got = traxla.jit(all_of_them)(a, b)
    for name, g in zip(names, got):
        _close(g, getattr(scipy_signal, name)(a, b, mode), tol)
    _close(got[-1], scipy_signal.convolve(a, b, mode), tol)


def test_fftconvolve_axes_and_complex():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
    b = rng.standard_normal((3, 4)).astype(np.complex128)
    with x64():
        _close(_jit(tsig.fftconvolve, mode="same", axes=1)(a, b),
               scipy_signal.fftconvolve(a, b, "same", axes=1), 1e-10)


def test_detrend_matches_scipy():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 3)).cumsum(0)
    with x64():
        for kwargs in ({}, {"type": "constant"}, {"bp": [10, 25]}, {"axis": 0, "bp": 13}):
            axis = kwargs.pop("axis", 0)
            _close(_jit(tsig.detrend, axis=axis, **kwargs)(x),
                   scipy_signal.detrend(x, axis=axis, **kwargs), 1e-9)


SPECTRAL = [
    ("stft", dict(nperseg=16)), ("stft", dict(nperseg=10, window="hamming", boundary="even")),
    ("stft", dict(nperseg=12, noverlap=4, boundary="odd", padded=False, nfft=16)),
    ("stft", dict(nperseg=8, boundary="constant", detrend="linear", return_onesided=False)),
    ("welch", dict(nperseg=20)), ("welch", dict(nperseg=16, average="median",
                                                 detrend="linear", scaling="spectrum")),
    ("welch", dict(nperseg=15, nfft=20, window="blackman")),
]


@pytest.mark.parametrize("name,kwargs", SPECTRAL, ids=[f"{n}{i}" for i, (n, _) in
                                                       enumerate(SPECTRAL)])
def test_spectral_estimators_match_scipy(name, kwargs):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 90))
    with x64():
        got = _jit(getattr(tsig, name), fs=4.0, **kwargs)(x)
    want = getattr(scipy_signal, name)(x, fs=4.0, **kwargs)
    for g, w in zip(got, want):
        _close(g, w, 1e-9)


def test_csd_and_istft_match_scipy():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal(120), rng.standard_normal(120)
    with x64():
        f, pxy = _jit(tsig.csd, nperseg=24)(x, y)
        _, _, z = _jit(tsig.stft, nperseg=24)(x)
        t, xr = _jit(tsig.istft, nperseg=24)(z)
    wf, wpxy = scipy_signal.csd(x, y, nperseg=24)
    _close(f, wf, 1e-12)
    _close(pxy, wpxy, 1e-9)
    _, _, wz = scipy_signal.stft(x, nperseg=24)
    wt, wx = scipy_signal.istft(wz, nperseg=24)
    _close(xr, wx, 1e-9)
    _close(t, wt, 1e-12)
    np.testing.assert_allclose(np.asarray(xr)[:120], x, atol=1e-9)


@hypothesis.settings(max_examples=6, deadline=None)
@hypothesis.given(st.sampled_from(["dct", "idct", "dctn", "idctn"]), st.integers(1, 3),
                  st.sampled_from([None, "backward", "ortho"]), st.booleans(),
                  st.sampled_from([np.float32, np.float64, np.complex64]),
                  st.integers(0, 2**31 - 1))
def test_scipy_fft_dct_family_matches_scipy(name, ndim, norm, resize, dtype, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(2, 6, ndim))
    x = rng.standard_normal(shape).astype(dtype)
    kwargs = {"norm": norm}
    if name.endswith("n"):
        if resize:
            kwargs["s"] = tuple(rng.integers(2, 7, ndim))
    elif resize:
        kwargs["n"] = int(rng.integers(2, 8))
    tol = 1e-4 if dtype != np.float64 else 1e-10
    with x64():
        got = _jit(getattr(tfft, name), **kwargs)(x)
    _close(got, getattr(scipy_fft, name)(x, **kwargs), tol)


def test_dct_gradient_is_its_transpose():
    """The DCT-II with norm='ortho' is orthogonal: its VJP is the inverse transform."""
    rng = np.random.default_rng(5)
    x, ct = rng.standard_normal(8), rng.standard_normal(8)
    with x64():
        g = traxla.jit(lambda x, ct: traxla.vjp(lambda x: tfft.dct(x, norm="ortho"), x)[1](ct))(
            x, ct)[0]
    _close(g, scipy_fft.idct(ct, norm="ortho"), 1e-10)


def test_vmap_of_convolve_and_stft_equals_stacking():
    rng = np.random.default_rng(6)
    a, v = rng.standard_normal((3, 9)).astype(np.float32), rng.standard_normal((3, 4)).astype(
        np.float32)
    # jitted: one program each (vmap's batching rules are what is under test; eagerly every
    # batched primitive would compile on its own)
    got = traxla.jit(traxla.vmap(lambda a, v: tnp.convolve(a, v, mode="same")))(a, v)
    np.testing.assert_allclose(np.asarray(got), np.stack([np.convolve(x, y, "same")
                                                          for x, y in zip(a, v)]), atol=1e-5)
    got = traxla.jit(traxla.vmap(lambda a: tsig.stft(a, nperseg=4)[2], in_axes=1,
                                 out_axes=2))(a.T)
    want = scipy_signal.stft(a, nperseg=4)[2]
    np.testing.assert_allclose(np.asarray(got), np.moveaxis(want, 0, 2), atol=1e-5)


def test_signal_and_convolve_errors():
    with pytest.raises(ValueError, match="only support 1-dimensional inputs"):
        tnp.convolve(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        tnp.convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match="inputs cannot be empty"):
        tnp.correlate(np.ones(3), np.ones(0))
    with pytest.raises(ValueError, match="One input must be smaller than the other"):
        tsig.convolve(np.ones((2, 5)), np.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="only supports boundary='fill'"):
        tsig.convolve2d(np.ones((2, 2)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        tsig.stft(np.ones(32), nperseg=8, noverlap=8)
    with pytest.raises(NotImplementedError, match="Only DCT type 2"):
        tfft.dct(np.ones(4), type=3)
