"""The ``fft`` primitive (JAX's lax/fft.py): complex FFT/IFFT over the trailing
``len(fft_lengths)`` dimensions, and the real RFFT/IRFFT pair."""
from __future__ import annotations

import enum

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing


class FftType(enum.IntEnum):
    """Which FFT to perform (prints as its number, as JAX's IntEnum does)."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def complex_dtype(dtype):
    return (np.zeros((), dtype) + np.zeros((), np.complex64)).dtype


def real_dtype(dtype):
    return np.finfo(dtype).dtype


def _fft_rule(x, *, fft_type, fft_lengths):
    fft_lengths = tuple(fft_lengths)
    n = len(fft_lengths)
    if n > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if x.shape[-n:] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape = x.shape[:-n] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        dtype = complex_dtype(x.dtype)
    elif fft_type == FftType.IRFFT:
        if not dtypes.is_complex(x.dtype):
            raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
        if x.shape[-n:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got fft_lengths={fft_lengths}")
        shape = x.shape[:-n] + fft_lengths
        dtype = real_dtype(x.dtype)
    else:
        if not dtypes.is_complex(x.dtype):
            raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
        if x.shape[-n:] != fft_lengths:
            raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape, dtype = x.shape, x.dtype
    return ShapedArray(tuple(shape), np.dtype(dtype), x.weak_type)


fft_p = def_typing(Primitive("fft"), _fft_rule)
P = {"fft": fft_p}
