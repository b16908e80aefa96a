"""``traxla.numpy.fft``: NumPy's FFT API over the ``fft`` primitive (JAX's numpy/fft.py),
with ``norm`` = "backward" | "ortho" | "forward"."""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.ir import dtypes
from traxla.ir.rules.shape import pad_p
from traxla.lax.fft import FftType, fft as lax_fft
from traxla.numpy._creation import arange, array, asarray
from traxla.numpy._diagonals_tiles import roll
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact
from traxla.numpy._reductions import prod
from traxla.numpy._shape import moveaxis
from traxla.numpy import conj, sqrt  # noqa: E402  (ufuncs are installed in the package namespace)


def _pad_impl(array, pad_width, constant_values):
    """Zero-padding as ``jnp.pad(..., mode='constant')`` stages it (a private stand-in
    until traxla.numpy has ``pad``)."""
    value = lax._convert_element_type(constant_values, lax.dtype_of(array), False)
    config = tuple((np.int64(lo), np.int64(hi), 0) for lo, hi in np.asarray(pad_width, np.int64))
    return pad_p.bind(array, value, padding_config=config)


_pad_impl.__name__ = "_pad"
_pad = jit(_pad_impl, static_argnums=(1,))


def _fft_norm(s, func_name, norm):
    if norm == "backward":
        return array(1)
    s, = promote_dtypes_inexact(s)
    if norm == "ortho":
        return sqrt(prod(s)) if func_name.startswith("i") else 1 / sqrt(prod(s))
    if norm == "forward":
        return prod(s) if func_name.startswith("i") else 1 / prod(s)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = ensure_arraylike(full_name, a)
    ndim = len(lax.shape_of(arr))
    if s is not None:
        s = tuple(map(operator.index, s))
        if np.any(np.less_equal(s, 0)):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(ndim - len(axes), ndim))
        arr = moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(lax.shape_of(arr))
        for axis, x in zip(axes, s):
            in_s[axis] = x
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = _pad(arr, tuple((0, x - y) for x, y in zip(in_s, lax.shape_of(arr))), 0)
    else:
        shape = lax.shape_of(arr)
        if fft_type == FftType.IRFFT:
            s = [shape[axis] for axis in axes[:-1]]
            if axes:
                s += [max(0, 2 * (shape[axes[-1]] - 1))]
        else:
            s = [shape[axis] for axis in axes]
    transformed = _fft_core_nd(arr, fft_type, s)
    if norm is not None:
        transformed *= _fft_norm(array(s, dtype=lax.dtype_of(transformed)), func_name, norm)
    if orig_axes is not None:
        transformed = moveaxis(transformed, axes, orig_axes)
    return transformed


def _fft_core_nd(arr, fft_type, s):
    """XLA's FFT handles up to 3 dimensions: more are done 3 (or 2) at a time."""
    if len(s) <= 3:
        return lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    ndim = len(lax.shape_of(arr))
    src = tuple(range(ndim - len(s), ndim - n))
    dst = tuple(range(ndim - len(s) + n, ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax_fft(arr, fft_type, tuple(s)[-n:])
        arr = moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
    arr = moveaxis(arr, dst, src)
    return lax_fft(arr, fft_type, tuple(s)[-n:])


def fftn(a, s=None, axes=None, norm=None):
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _axis_check_1d(func_name, axis):
    full_name = f"jax.numpy.fft.{func_name}"
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. "
                         f"Got axis = {axis!r}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def fft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a signal with Hermitian symmetry (a real spectrum)."""
    conj_a = conj(a)
    _axis_check_1d("hfft", axis)
    nn = (lax.shape_of(conj_a)[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of ``hfft``."""
    _axis_check_1d("ihfft", axis)
    arr = asarray(a)
    nn = lax.shape_of(arr)[axis] if n is None else n
    output = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return conj(output) * (1 / nn)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d``."""
    dtype = dtype or dtypes.default_float()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = dtypes.finfo(dtypes.canonicalize(dtypes.to_dtype(dtype))).dtype \
        if dtypes.is_inexact(dtypes.to_dtype(dtype)) else dtypes.default_float()
    i = arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    result = k.astype(dtype) / array(d * n, dtype=dtype)
    return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point RFFT with sample spacing ``d``."""
    dtype = dtype or dtypes.default_float()
    _check_freq_args("rfftfreq", n, d)
    k = arange(0, (n // 2 if n % 2 == 0 else (n - 1) // 2) + 1, dtype=dtype)
    return k / array(d * n, dtype=dtype)


def fftshift(x, axes=None):
    """Moves the zero-frequency bin to the centre."""
    x = ensure_arraylike("fftshift", x)
    shape = lax.shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
        shift = [dim // 2 for dim in shape]
    elif isinstance(axes, int):
        shift = shape[axes] // 2
    else:
        shift = [shape[ax] // 2 for ax in axes]
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of ``fftshift``."""
    x = ensure_arraylike("ifftshift", x)
    shape = lax.shape_of(x)
    if axes is None:
        axes = tuple(range(len(shape)))
        shift = [-(dim // 2) for dim in shape]
    elif isinstance(axes, int):
        shift = -(shape[axes] // 2)
    else:
        shift = [-(shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)
