"""``lax.fft`` (JAX's lax/fft.py): converts the operand (complex for FFT/IFFT/IRFFT, real
inexact for RFFT) and binds the ``fft`` primitive, staged out as an inner ``jit`` named
``fft`` as in JAX."""
from __future__ import annotations

from traxla.api import jit as _jit
from traxla.ir import dtypes
from traxla.ir.rules.fft import FftType, complex_dtype, fft_p, real_dtype  # noqa: F401
from traxla.lax import _convert_element_type, dtype_of


def _str_to_fft_type(s):
    types = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
             "irfft": FftType.IRFFT}
    if s.lower() in types and s in (s.lower(), s.upper()):
        return types[s.lower()]
    raise ValueError(f"Unknown FFT type '{s}'")


def _fft(x, fft_type, fft_lengths):
    if isinstance(fft_type, str):
        typ = _str_to_fft_type(fft_type)
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    dtype = dtype_of(x)
    if typ == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        target = dtype if dtypes.is_inexact(dtype) else dtypes.canonicalize(dtypes.float64)
        x = _convert_element_type(x, target, False)
    else:
        if dtypes.is_complex(dtype):
            target = dtype
        elif dtypes.is_inexact(dtype):
            target = complex_dtype(dtype)
        else:
            target = dtypes.canonicalize(dtypes.complex128)
        x = _convert_element_type(x, target, False)
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=tuple(int(n) for n in fft_lengths))


_fft.__name__ = "fft"
fft = _jit(_fft, static_argnums=(1, 2))
