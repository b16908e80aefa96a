"""``traxla.scipy.signal``: direct and FFT convolutions/correlations (N-d and 2-d), and the
spectral estimators ``stft``, ``istft``, ``welch``, ``csd`` with ``detrend``, after
``jax.scipy.signal``.

Private stand-ins for names other engineers own: zero/edge/reflect padding (``jnp.pad``),
the last-axis median (``jnp.median``) and the linear least-squares trend (``lstsq``) are
written here with lax operations."""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np

from traxla import lax, numpy as jnp
from traxla.batching import vmap
from traxla.ir import dtypes
from traxla.ir.rules.fft import complex_dtype
from traxla.lax.convolution import conv_general_dilated
from traxla.numpy import fft as jnp_fft
from traxla.numpy._promotion import check_arraylike, ensure_arraylike, promote_dtypes_inexact
from traxla.numpy._shape import canonicalize_axis
from traxla.scipy.fft import _promote_dtypes_complex


def _shape(x):
    return tuple(lax.shape_of(x))


# -- convolution and correlation ----------------------------------------------------------------

def fftconvolve(in1, in2, mode="full", axes=None):
    """N-dimensional convolution through the FFT (``scipy.signal.fftconvolve``)."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if len(_shape(in1)) != len(_shape(in2)):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    conv = functools.partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return conv(in1, in2)
    ndim = len(_shape(in1))
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonicalize_axis(ax, ndim) for ax in axes)
    mapped = set(range(ndim)) - set(axes)
    if any(_shape(in1)[i] != _shape(in2)[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={_shape(in1)!r} "
                         f"in2.shape={_shape(in2)!r} axes={axes!r}")
    for ax in sorted(mapped):
        conv = vmap(conv, in_axes=ax, out_axes=ax)
    return conv(in1, in2)


def _fftconvolve_unbatched(in1, in2, mode):
    s1, s2 = _shape(in1), _shape(in2)
    full_shape = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "valid":
        no_swap = all(a >= b for a, b in zip(s1, s2))
        swap = all(a <= b for a, b in zip(s1, s2))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other "
                             "in every dimension.")
        if swap:
            in1, in2 = in2, in1
            s1, s2 = s2, s1
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = in1 * in2
    else:
        if dtypes.is_complex(lax.dtype_of(in1)):
            fft, ifft = jnp_fft.fftn, jnp_fft.ifftn
        else:
            fft, ifft = jnp_fft.rfftn, jnp_fft.irfftn
        conv = ifft(fft(in1, full_shape) * fft(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = s1
    else:
        out_shape = tuple(a - b + 1 for a, b in zip(s1, s2))
    start = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, start, out_shape)


def _convolve_nd(in1, in2, mode, *, precision):
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if len(_shape(in1)) != len(_shape(in2)):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if math.prod(_shape(in1)) == 0 or math.prod(_shape(in2)) == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{_shape(in1)} and {_shape(in2)}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    no_swap = all(a >= b for a, b in zip(_shape(in1), _shape(in2)))
    swap = all(a <= b for a, b in zip(_shape(in1), _shape(in2)))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")
    shape_o = _shape(in2)
    if swap:
        in1, in2 = in2, in1
    shape = _shape(in2)
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0) for _ in shape]
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
                   for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    strides = tuple(1 for _ in shape)
    result = conv_general_dilated(in1[None, None], in2[None, None], strides, padding,
                                  precision=precision)
    return result[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution (``scipy.signal.convolve``); ``method`` 'auto'/'direct'
    use ``conv_general_dilated``, 'fft' uses ``fftconvolve``."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution (``scipy.signal.convolve2d``; only zero fill at the boundary)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation (``scipy.signal.correlate``)."""
    return convolve(in1, jnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation (``scipy.signal.correlate2d``; only zero fill)."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")
    s1, s2 = np.shape(in1), np.shape(in2)
    swap = all(a <= b for a, b in zip(s1, s2))
    same_shape = all(a == b for a, b in zip(s1, s2))
    if mode == "same":
        in1, in2 = jnp.flip(in1), in2.conj()
        return jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))
    if mode == "valid":
        if swap and not same_shape:
            in1, in2 = jnp.flip(in2), in1.conj()
            return _convolve_nd(in1, in2, mode, precision=precision)
        in1, in2 = jnp.flip(in1), in2.conj()
        return jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))
    if swap:
        in1, in2 = jnp.flip(in2), in1.conj()
        return _convolve_nd(in1, in2, mode, precision=precision).conj()
    in1, in2 = jnp.flip(in1), in2.conj()
    return jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))


# -- detrending -----------------------------------------------------------------------------------

def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):  # noqa: A002
    """Removes the mean ('constant') or a (piecewise) least-squares line ('linear')."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data_arr, = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return data_arr - data_arr.mean(axis, keepdims=True)
    n = _shape(data_arr)[axis]
    bp_arr = np.sort(np.unique(np.r_[0, bp, n]))
    if bp_arr[0] < 0 or bp_arr[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         "given axis.")
    data_arr = jnp.moveaxis(data_arr, axis, 0)
    shape = _shape(data_arr)
    data_arr = data_arr.reshape(n, -1)
    pieces = []
    for m in range(len(bp_arr) - 1):
        lo, hi = int(bp_arr[m]), int(bp_arr[m + 1])
        pieces.append(_remove_line(data_arr[lo:hi]))
    data_arr = jnp.concatenate(pieces, 0) if len(pieces) > 1 else pieces[0]
    return jnp.moveaxis(data_arr.reshape(shape), 0, axis)


def _remove_line(segment):
    """``segment`` minus its least-squares line ``a + b t`` (t = 1..n, per column), from
    the 2x2 normal equations solved in closed form around the mean of t (well
    conditioned)."""
    n = _shape(segment)[0]
    dtype = lax.dtype_of(segment)
    if n == 1:
        return segment - segment
    t = jnp.arange(1, n + 1, dtype=dtype)[:, None]
    t_centered = t - (n + 1) / 2.0
    mean = segment.mean(0, keepdims=True)
    slope = (t_centered * (segment - mean)).sum(0, keepdims=True) / (t_centered ** 2).sum()
    return segment - mean - slope * t_centered


# -- spectral estimation --------------------------------------------------------------------------

def _triage_segments(window, nperseg, input_length, dtype):
    if isinstance(window, (str, tuple)):
        nperseg_int = input_length if nperseg is None else int(nperseg)
        if nperseg_int > input_length:
            warnings.warn(f"nperseg={nperseg_int} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}")
            nperseg_int = input_length
        if window == "hann":
            win = (jnp.array([1.0]) if nperseg_int == 1 else
                   jnp.sin(jnp.linspace(0, np.pi, nperseg_int, endpoint=False)) ** 2)
        else:
            from scipy.signal import get_window  # optional: SciPy is an optional dependency
            win = get_window(window, nperseg_int)
        win = jnp.array(win, dtype=dtype)
    else:
        win = jnp.asarray(window, dtype=dtype)
        nperseg_int = math.prod(_shape(win)) if nperseg is None else int(nperseg)
        if len(_shape(win)) != 1:
            raise ValueError("window must be 1-D")
        if input_length < _shape(win)[0]:
            raise ValueError("window is longer than input signal")
        if nperseg_int != _shape(win)[0]:
            raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg_int


def _pad_last(x, n, mode):
    """``x`` extended by ``n`` points at both ends of its last axis: 'constant' (zeros),
    'edge' (repeat the end values) or 'reflect' (mirror without the end value)."""
    if n < 1:
        return x
    size = _shape(x)[-1]
    if mode == "constant":
        zeros = jnp.zeros(_shape(x)[:-1] + (n,), lax.dtype_of(x))
        return jnp.concatenate([zeros, x, zeros], -1)
    if mode == "edge":
        left = jnp.repeat(x[..., :1], n, axis=-1)
        right = jnp.repeat(x[..., -1:], n, axis=-1)
        return jnp.concatenate([left, x, right], -1)
    if n > size - 1:
        raise ValueError(f"reflect padding of {n} needs at least {n + 1} points, got {size}")
    left = jnp.flip(x[..., 1:n + 1], -1)
    right = jnp.flip(x[..., size - n - 1:size - 1], -1)
    return jnp.concatenate([left, x, right], -1)


def odd_ext(x, n, axis=-1):
    """Odd extension of ``x`` by ``n`` points at both ends of ``axis``."""
    if n < 1:
        return x
    if n > _shape(x)[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {_shape(x)[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = jnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return jnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _fft_helper(x, win, detrend_func, nperseg, noverlap, nfft, sides):
    if lax.dtype_of(x).kind == "i":
        x = x.astype(lax.dtype_of(win))
    *batch_shape, length = _shape(x)
    if nperseg == 1 and noverlap == 0:
        result = x[..., None]
    else:
        step = nperseg - noverlap
        starts = range(0, length - nperseg + 1, step)
        result = jnp.stack([lax.slice_in_dim(x, s, s + nperseg, axis=-1) for s in starts], -2)
    result = detrend_func(result)
    if dtypes.is_complex(lax.dtype_of(win)):
        result, = _promote_dtypes_complex(result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result
    if sides == "twosided":
        return jnp_fft.fft(result, n=nfft)
    return jnp_fft.rfft(result.real, n=nfft)


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                     detrend_type="constant", return_onesided=True, scaling="density", axis=-1,
                     mode="psd", boundary=None, padded=False):
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    boundary_funcs = {
        "even": lambda x, n, axis=-1: _pad_last(x, n, "reflect"), "odd": odd_ext,
        "constant": lambda x, n, axis=-1: _pad_last(x, n, "edge"),
        "zeros": lambda x, n, axis=-1: _pad_last(x, n, "constant"),
        None: lambda x, *args, **kwargs: x}
    if boundary not in boundary_funcs:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(boundary_funcs.keys())}")
    axis = canonicalize_axis(axis, np.ndim(x))
    if y is None:
        check_arraylike("spectral_helper", x)
        x, = promote_dtypes_inexact(x)
        y_arr = x
        outershape = _shape(x)[:axis] + _shape(x)[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = promote_dtypes_inexact(x, y)
        if len(_shape(x)) != len(_shape(y_arr)):
            raise ValueError(f"two-arguments must have the same rank ({len(_shape(x))} vs "
                             f"{len(_shape(y_arr))}).")
        try:
            outershape = np.broadcast_shapes(_shape(x)[:axis] + _shape(x)[axis + 1:],
                                             _shape(y_arr)[:axis] + _shape(y_arr)[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = complex_dtype(lax.dtype_of(x))
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(window, nperseg, _shape(x)[axis], lax.dtype_of(x))
    noverlap_int = nperseg_int // 2 if noverlap is None else int(noverlap)
    nfft_int = nperseg_int if nfft is None else int(nfft)
    if y is None:
        if math.prod(_shape(x)) == 0:
            return (jnp.zeros(_shape(x), freq_dtype), jnp.zeros(_shape(x), freq_dtype),
                    jnp.zeros(_shape(x), result_dtype))
    elif math.prod(_shape(x)) == 0 or math.prod(_shape(y_arr)) == 0:
        shape = outershape[:axis] + (min(_shape(x)[axis], _shape(y_arr)[axis]),) + \
            outershape[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None and len(_shape(y_arr)) > 1:
        y_arr = jnp.moveaxis(y_arr, axis, -1)
    if y is not None and _shape(x)[-1] != _shape(y_arr)[-1]:
        if _shape(x)[-1] < _shape(y_arr)[-1]:
            pad_shape = _shape(x)[:-1] + (_shape(y_arr)[-1] - _shape(x)[-1],)
            x = jnp.concatenate((x, jnp.zeros(pad_shape, lax.dtype_of(x))), -1)
        else:
            pad_shape = _shape(y_arr)[:-1] + (_shape(x)[-1] - _shape(y_arr)[-1],)
            y_arr = jnp.concatenate((y_arr, jnp.zeros(pad_shape, lax.dtype_of(x))), -1)
    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int
    if boundary is not None:
        ext = boundary_funcs[boundary]
        x = ext(x, nperseg_int // 2, axis=-1)
        if y is not None:
            y_arr = ext(y_arr, nperseg_int // 2, axis=-1)
    if padded:
        nadd = -(_shape(x)[-1] - nperseg_int) % nstep % nperseg_int
        x = jnp.concatenate((x, jnp.zeros(_shape(x)[:-1] + (nadd,), lax.dtype_of(x))), -1)
        if y is not None:
            y_arr = jnp.concatenate(
                (y_arr, jnp.zeros(_shape(y_arr)[:-1] + (nadd,), lax.dtype_of(x))), -1)
    if isinstance(detrend_type, str):
        detrend_func = functools.partial(detrend, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        detrend_func = detrend_type
    elif not detrend_type:
        detrend_func = lambda d: d  # noqa: E731
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale, = _promote_dtypes_complex(scale)
    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (dtypes.is_complex(lax.dtype_of(x))
                            or (y is not None and dtypes.is_complex(lax.dtype_of(y_arr)))):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False")
    if sides == "twosided":
        freqs = jnp_fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp_fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    result = _fft_helper(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
    if y is not None:
        result_y = _fft_helper(y_arr, win, detrend_func, nperseg_int, noverlap_int, nfft_int,
                               sides)
        result = jnp.conjugate(result) * result_y
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].multiply(2)
    time = jnp.arange(nperseg_int / 2, _shape(x)[-1] - nperseg_int / 2 + 1,
                      nperseg_int - noverlap_int, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - nperseg_int / 2 / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    result = jnp.moveaxis(result, -1, axis)
    return freqs, time, result


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform (``scipy.signal.stft``): (freqs, times, Zxx)."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling="spectrum", axis=axis, mode="stft",
                            boundary=boundary, padded=padded)


def _median_last(x):
    n = _shape(x)[-1]
    s = jnp.sort(x, axis=-1)
    if n % 2:
        return s[..., n // 2]
    return (s[..., n // 2 - 1] + s[..., n // 2]) / 2


def _median_bias(n):
    ii_2 = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Cross power spectral density by Welch's method (``scipy.signal.csd``)."""
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if len(_shape(pxy)) >= 2 and math.prod(_shape(pxy)) > 0:
        if _shape(pxy)[-1] > 1:
            if average == "median":
                bias = _median_bias(_shape(pxy)[-1])
                if dtypes.is_complex(lax.dtype_of(pxy)):
                    pxy = _median_last(pxy.real) + 1j * _median_last(pxy.imag)
                else:
                    pxy = _median_last(pxy)
                pxy = pxy / bias.astype(np.dtype(lax.dtype_of(pxy)))
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, _shape(pxy)[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Power spectral density by Welch's method (``scipy.signal.welch``)."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_and_add(x, step_size):
    check_arraylike("_overlap_and_add", x)
    step_size = int(step_size)
    if len(_shape(x)) < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")
    *batch_shape, nframes, segment_len = _shape(x)
    flat = math.prod(batch_shape)
    x = x.reshape((flat, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size
    padded_len = nstep_per_segment * step_size
    x = lax.pad(x, jnp.array(0, lax.dtype_of(x)), [(0, 0, 0), (0, 0, 0),
                                                    (0, padded_len - segment_len, 0)])
    x = x.reshape((flat, nframes, nstep_per_segment, step_size))
    x = x.transpose((0, 2, 1, 3))
    x = lax.pad(x, jnp.array(0, lax.dtype_of(x)), [(0, 0, 0), (0, 0, 0), (0, nframes, 0),
                                                    (0, 0, 0)])
    shrunken = _shape(x)[2] - 1
    x = x.reshape((flat, -1))
    x = x[:, :nstep_per_segment * shrunken * step_size]
    x = x.reshape((flat, nstep_per_segment, shrunken * step_size))
    x = x.sum(axis=1)[:, :output_size]
    return x.reshape(tuple(batch_shape) + (-1,))


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """Inverse short-time Fourier transform (``scipy.signal.istft``): (times, x)."""
    Zxx = ensure_arraylike("istft", Zxx)
    ndim = len(_shape(Zxx))
    if ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, ndim)
    time_axis = canonicalize_axis(time_axis, ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = jnp.asarray(Zxx, dtype=complex_dtype(lax.dtype_of(Zxx)))
    n_default = 2 * (_shape(Zxx)[freq_axis] - 1) if input_onesided else _shape(Zxx)[freq_axis]
    nperseg_int = int(nperseg or n_default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int
    if time_axis != ndim - 1 or freq_axis != ndim - 2:
        outer = tuple(i for i in range(ndim) if i not in {time_axis, freq_axis})
        Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    ifunc = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    xsubs = ifunc(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]
    xdtype = lax.dtype_of(xsubs)
    if isinstance(window, str) and window == "hann":
        win = (jnp.array([1.0]) if nperseg_int == 1 else
               jnp.sin(jnp.linspace(0, np.pi, nperseg_int, endpoint=False)) ** 2)
        win = win.astype(xdtype)
    elif isinstance(window, (str, tuple)):
        from scipy.signal import get_window  # optional: SciPy is an optional dependency
        win = jnp.array(get_window(window, nperseg_int), dtype=xdtype)
    else:
        win = jnp.asarray(window)
        if len(_shape(win)) != 1:
            raise ValueError("window must be 1-D")
        if _shape(win)[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs = xsubs * win.sum()
    nx = len(_shape(xsubs))
    win = lax.expand_dims(win, (*range(nx - 2), -1))
    x = _overlap_and_add(jnp.swapaxes(xsubs * win, -2, -1), nstep)
    win_squared = jnp.repeat(win * win, _shape(xsubs)[-1], axis=-1)
    norm = _overlap_and_add(jnp.swapaxes(win_squared, -2, -1), nstep)
    if boundary:
        x = x[..., nperseg_int // 2:-(nperseg_int // 2)]
        norm = norm[..., nperseg_int // 2:-(nperseg_int // 2)]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if len(_shape(x)) > 1 and time_axis != ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(_shape(x)[0], dtype=np.finfo(lax.dtype_of(x)).dtype) / fs
    return time, x

