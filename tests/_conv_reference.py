"""Direct-loop NumPy references for convolutions and windowed reductions (the oracles of
tests/test_conv*.py and tests/test_windowed.py)."""
from __future__ import annotations

import itertools

import numpy as np


def dilate(x, dilation, axes):
    for ax, d in zip(axes, dilation):
        if d == 1 or x.shape[ax] == 0:
            continue
        shape = list(x.shape)
        shape[ax] = (shape[ax] - 1) * d + 1
        out = np.zeros(shape, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(None, None, d)
        out[tuple(idx)] = x
        x = out
    return x


def pad(x, padding, axes, value=0):
    """Padding with (low, high) pairs that may be negative (cropping)."""
    for ax, (lo, hi) in zip(axes, padding):
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths, constant_values=value)
        idx = [slice(None)] * x.ndim
        idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
        x = x[tuple(idx)]
    return x


def conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, dn, fgc=1, bgc=1):
    """conv_general_dilated by loops over output positions; ``dn`` is (lhs_spec, rhs_spec,
    out_spec) as permutations."""
    lhs_spec, rhs_spec, out_spec = dn
    x = np.transpose(lhs, lhs_spec).astype(np.result_type(lhs, rhs))
    w = np.transpose(rhs, rhs_spec).astype(x.dtype)
    nsp = x.ndim - 2
    sp = tuple(range(2, 2 + nsp))
    x = pad(dilate(x, lhs_dilation, sp), padding, sp)
    w = dilate(w, rhs_dilation, sp)
    n, c = x.shape[:2]
    o = w.shape[0]
    out_sp = [max(0, (x.shape[2 + i] - w.shape[2 + i]) // strides[i] + 1) for i in range(nsp)]
    out = np.zeros((n // bgc, o) + tuple(out_sp), x.dtype)
    cg, og = c // fgc, o // max(fgc, bgc)
    nb = n // bgc
    for pos in itertools.product(*[range(s) for s in out_sp]):
        window = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, strides, w.shape[2:]))
        patch = x[(slice(None), slice(None)) + window]
        for g in range(max(fgc, bgc)):
            wg = w[g * og:(g + 1) * og]
            if fgc > 1:
                pg = patch[:, g * cg:(g + 1) * cg]
            elif bgc > 1:
                pg = patch[g * nb:(g + 1) * nb]
            else:
                pg = patch
            ax = list(range(1, pg.ndim))
            val = np.tensordot(pg, wg, axes=(ax, ax))
            out[(slice(None), slice(g * og, (g + 1) * og)) + pos] = val
    return np.transpose(out, np.argsort(out_spec))


def reduce_window(x, init, op, dims, strides, padding, base_dilation, window_dilation):
    """reduce_window by loops: ``op`` reduces a flat window (e.g. np.max)."""
    axes = tuple(range(x.ndim))
    if any(b != 1 for b in base_dilation):
        # holes are filled with init, as XLA does
        shape = [(s - 1) * b + 1 if s else 0 for s, b in zip(x.shape, base_dilation)]
        full = np.full(shape, init, x.dtype)
        full[tuple(slice(None, None, b) for b in base_dilation)] = x
        x = full
    x = pad(x, padding, axes, init)
    eff = [(k - 1) * d + 1 for k, d in zip(dims, window_dilation)]
    out_shape = [max(0, (s - k) // st + 1) for s, k, st in zip(x.shape, eff, strides)]
    out = np.full(out_shape, init, x.dtype)
    for pos in itertools.product(*[range(s) for s in out_shape]):
        window = tuple(slice(p * st, p * st + k, d)
                       for p, st, k, d in zip(pos, strides, eff, window_dilation))
        vals = x[window].ravel()
        out[pos] = op(np.concatenate([[init], vals]).astype(x.dtype))
    return out
