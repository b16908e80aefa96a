"""``traxla.scipy.fft``: the type-2 discrete cosine transform and its inverse (``dct``,
``dctn``, ``idct``, ``idctn``) through the FFT, as ``jax.scipy.fft`` computes them."""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from traxla import lax, numpy as jnp
from traxla.ir import dtypes
from traxla.ir.rules.fft import complex_dtype
from traxla.numpy import fft as jnp_fft
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact, result_type
from traxla.numpy._shape import canonicalize_axis


def _promote_dtypes_complex(*args):
    dtype, weak = result_type(*args)
    target = dtype if dtypes.is_complex(dtype) else complex_dtype(
        dtype if dtypes.is_inexact(dtype) else dtypes.default_float())
    return [lax._lift(lax._convert_element_type(x, np.dtype(target), weak)) for x in args]


def _W4(N, k):
    N_arr, k = _promote_dtypes_complex(N, k)
    return jnp.exp(-.5j * np.pi * k / N_arr)


def _dct_interleave(x, axis):
    v0 = lax.slice_in_dim(x, None, None, 2, axis)
    v1 = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([v0, v1], axis)


def _dct_ortho_norm(out, axis):
    n = lax.shape_of(out)[axis]
    dtype = lax.dtype_of(out)
    factor = lax.concatenate([lax.full((1,), 4, dtype), lax.full((n - 1,), 2, dtype)], 0)
    factor = lax.expand_dims(factor, [a for a in range(len(lax.shape_of(out))) if a != axis])
    return out / lax.sqrt(factor * n)


def _checked_input(name, x, type, norm):  # noqa: A002
    """``x`` as an array, after JAX's checks of it, of ``type`` and of ``norm``."""
    x = ensure_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ["backward", "ortho"]:
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")
    return x


def _on_real_and_imag(transform, x, **kwargs):
    """A real transform of a complex ``x``: of its real and imaginary parts separately."""
    return lax.complex(transform(x.real, **kwargs), transform(x.imag, **kwargs))


def _padded_along(x, n, axis):
    """``x`` zero-padded to length ``n`` along ``axis`` (None: as is), the canonical axis,
    the rank and the transform length."""
    ndim = len(lax.shape_of(x))
    axis = canonicalize_axis(axis, ndim)
    if n is not None:
        x = _zero_pad(x, {axis: n})
    return x, axis, ndim, lax.shape_of(x)[axis]


def _zero_pad(x, lengths):
    """Pads ``x`` at the end of each axis in ``lengths`` (axis -> new length)."""
    shape = lax.shape_of(x)
    return lax.pad(x, jnp.array(0, lax.dtype_of(x)),
                   [(0, lengths[a] - shape[a] if a in lengths else 0, 0)
                    for a in range(len(shape))])


def dct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """Discrete cosine transform of type 2 along ``axis`` (``scipy.fft.dct``)."""
    x = _checked_input("dct", x, type, norm)
    if dtypes.is_complex(lax.dtype_of(x)):
        return _on_real_and_imag(dct, x, type=type, n=n, norm=norm, axis=axis)
    x, axis, ndim, N = _padded_along(x, n, axis)
    v = _dct_interleave(x, axis)
    V = jnp_fft.fft(v, axis=axis)
    k = lax.expand_dims(jnp.arange(N, dtype=lax.dtype_of(V.real)),
                        [a for a in range(ndim) if a != axis])
    out = V * _W4(N, k)
    out = 2 * out.real
    if norm == "ortho":
        out = _dct_ortho_norm(out, axis)
    return out


def _dct2(x, axes, norm):
    ndim = len(lax.shape_of(x))
    axis1, axis2 = (functools.partial(canonicalize_axis, ndim=ndim)(a) for a in axes)
    N1, N2 = lax.shape_of(x)[axis1], lax.shape_of(x)[axis2]
    v = _dct_interleave(_dct_interleave(x, axis1), axis2)
    V = jnp_fft.fftn(v, axes=axes)
    k1 = lax.expand_dims(jnp.arange(N1, dtype=lax.dtype_of(V)),
                         [a for a in range(ndim) if a != axis1])
    k2 = lax.expand_dims(jnp.arange(N2, dtype=lax.dtype_of(V)),
                         [a for a in range(ndim) if a != axis2])
    out = _W4(N1, k1) * (_W4(N2, k2) * V + _W4(N2, -k2)
                         * jnp.roll(jnp.flip(V, axis=axis2), shift=1, axis=axis2))
    out = 2 * out.real
    if norm == "ortho":
        return _dct_ortho_norm(_dct_ortho_norm(out, axis1), axis2)
    return out


def _axes_and_lengths(x, s, axes):
    ndim = len(lax.shape_of(x))
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [operator.index(s)]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        axes = tuple(canonicalize_axis(a, ndim) for a in axes)
    return s, axes


def _dct_over_axes(name, nd_fn, one_axis_fn, padded_fn, x, type, s, axes, norm):  # noqa: A002
    """``dctn``/``idctn``: the real and imaginary parts apart, one axis through ``one_axis_fn``
    (``dct``/``idct``), else ``x`` zero-padded to ``s`` and then ``padded_fn(x, axes, norm)``."""
    x = _checked_input(name, x, type, norm)
    if dtypes.is_complex(lax.dtype_of(x)):
        return _on_real_and_imag(nd_fn, x, type=type, s=s, norm=norm, axes=axes)
    s, axes = _axes_and_lengths(x, s, axes)
    if len(axes) == 1:
        return one_axis_fn(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
    if s is not None:
        x = _zero_pad(x, dict(zip(axes, s)))
    return padded_fn(x, axes, norm)


def dctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """Multidimensional type-2 DCT over ``axes`` (``scipy.fft.dctn``)."""
    return _dct_over_axes("dctn", dctn, dct, _dctn_padded, x, type, s, axes, norm)


def _dctn_padded(x, axes, norm):
    # as JAX: two axes at a time through the 2-D DCT
    if len(axes) == 2:
        return _dct2(x, axes=axes, norm=norm)
    for block in [axes[i:i + 2] for i in range(0, len(axes), 2)]:
        x = dctn(x, axes=block, norm=norm)
    return x


def idct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """Inverse of the type-2 DCT along ``axis`` (``scipy.fft.idct``)."""
    x = _checked_input("idct", x, type, norm)
    if dtypes.is_complex(lax.dtype_of(x)):
        return _on_real_and_imag(idct, x, type=type, n=n, norm=norm, axis=axis)
    x, axis, ndim, N = _padded_along(x, n, axis)
    x, = promote_dtypes_inexact(x)
    if norm is None or norm == "backward":
        x = _dct_ortho_norm(x, axis)
    x = _dct_ortho_norm(x, axis)
    k = lax.expand_dims(jnp.arange(N, dtype=lax.dtype_of(x)),
                        [a for a in range(ndim) if a != axis])
    w4 = _W4(N, k)
    x = x.astype(lax.dtype_of(w4))
    x = x / (_W4(N, k))
    x = x * 2 * N
    x = jnp_fft.ifft(x, axis=axis)
    return _dct_deinterleave(x.real, axis)


def idctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """Inverse of the multidimensional type-2 DCT (``scipy.fft.idctn``)."""
    return _dct_over_axes("idctn", idctn, idct, _idctn_padded, x, type, s, axes, norm)


def _idctn_padded(x, axes, norm):
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x


def _dct_deinterleave(x, axis):
    shape = lax.shape_of(x)
    everything = slice(None, None, None)
    half = math.ceil(shape[axis] / 2)
    ix0 = tuple(slice(None, half, 1) if i == axis else everything for i in range(len(shape)))
    ix1 = tuple(slice(half, None, 1) if i == axis else everything for i in range(len(shape)))
    v0 = x[ix0]
    v1 = lax.rev(x[ix1], (axis,))
    out = jnp.zeros(shape, dtype=lax.dtype_of(x))
    evens = tuple(slice(None, None, 2) if i == axis else everything for i in range(len(shape)))
    odds = tuple(slice(1, None, 2) if i == axis else everything for i in range(len(shape)))
    out = out.at[evens].set(v0)
    return out.at[odds].set(v1)

