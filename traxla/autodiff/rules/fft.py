"""JVP and transpose of ``fft`` (JAX's lax/fft.py): the FFT is linear; an FFT/IFFT
transposes to itself, and RFFT/IRFFT transpose to each other with the weights of the
Hermitian half-spectrum."""
from __future__ import annotations

import math

from traxla import lax
from traxla.api import jit
from traxla.ir.rules.fft import FftType, complex_dtype, fft_p, real_dtype
from traxla.lax.fft import fft
from traxla.autodiff.rules._util import deflinear2


def _half_spectrum_mask(t, length, n_last, dtype):
    """2 for the bins that stand for a conjugate pair, 1 for DC (and Nyquist when even)."""
    mask = lax.full_like(t, 2.0, shape=(length,), dtype=dtype)
    mask = lax.dynamic_update_slice(mask, lax.full_like(t, 1.0, shape=(1,), dtype=dtype), (0,))
    if not n_last % 2:
        mask = lax.dynamic_update_slice(mask, lax.full_like(t, 1.0, shape=(1,), dtype=dtype),
                                        (length - 1,))
    return mask


def _rfft_transpose_impl(t, fft_lengths):
    m = lax.shape_of(t)[-1]
    mask = _half_spectrum_mask(t, m, fft_lengths[-1], None)
    n = math.prod(fft_lengths)
    mask = lax.expand_dims(mask, range(len(lax.shape_of(t)) - 1))
    out = n * fft(lax.div(lax.conj(t), mask), FftType.IRFFT, fft_lengths)
    assert lax.dtype_of(out) == real_dtype(lax.dtype_of(t))
    return out


_rfft_transpose_impl.__name__ = "_rfft_transpose"
_rfft_transpose = jit(_rfft_transpose_impl, static_argnums=(1,))


def _irfft_transpose(t, fft_lengths):
    x = fft(t, FftType.RFFT, fft_lengths)
    n = lax.shape_of(x)[-1]
    mask = _half_spectrum_mask(t, n, fft_lengths[-1], lax.dtype_of(x))
    scale = 1 / math.prod(fft_lengths)
    out = scale * lax.expand_dims(mask, range(len(lax.shape_of(x)) - 1)) * x
    assert lax.dtype_of(out) == complex_dtype(lax.dtype_of(t))
    return lax.conj(out)


def _fft_transpose(t, operand, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft(t, fft_type, fft_lengths)]


deflinear2(fft_p, _fft_transpose)
