"""Lowering of ``fft`` to ``stablehlo.fft``. On CUDA a multi-dimensional IRFFT is split
into IFFTs over the leading axes and a 1-D IRFFT, as JAX does for cuFFT."""
from __future__ import annotations

from traxla.ir.rules.fft import FftType, fft_p
from traxla.lowering.mlir import hlo, i64_array
from traxla.lowering.registry import mark_platform_sensitive, register_lowering


def _fft(ctx, x, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    if fft_type == FftType.IRFFT and len(fft_lengths) > 1 and ctx.module.platform in ("cuda",
                                                                                       "gpu"):
        rank = len(ctx.avals_in[0].shape)
        target = rank - len(fft_lengths)
        perm_out = list(range(rank))
        perm_out.insert(target, perm_out.pop(-1))
        x = hlo.transpose(x, perm_out)
        x = hlo.fft(x, hlo.FftTypeAttr.get("IFFT"), i64_array(fft_lengths[:-1]))
        perm_in = list(range(rank))
        perm_in.append(perm_in.pop(target))
        x = hlo.transpose(x, perm_in)
        return hlo.fft(x, hlo.FftTypeAttr.get("IRFFT"), i64_array(fft_lengths[-1:]))
    return hlo.fft(x, hlo.FftTypeAttr.get(fft_type.name), i64_array(fft_lengths))


register_lowering(fft_p, _fft)
mark_platform_sensitive(fft_p)  # reads ctx.module.platform
