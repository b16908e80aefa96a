"""Batching of ``fft``: the batch dimension moves to the front (the FFT acts on the trailing
dimensions)."""
from __future__ import annotations

from traxla.ir.rules.fft import fft_p
from traxla.lax.fft import fft
from traxla.batching.batch_trace import moveaxis, register_batching


def _fft_batch(size, vals, dims, *, fft_type, fft_lengths):
    x, = vals
    return fft(moveaxis(x, dims[0], 0), fft_type, fft_lengths), 0


register_batching(fft_p, _fft_batch)
