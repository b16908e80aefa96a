"""``jnp.pad`` with every NumPy mode (constant, edge, wrap, reflect, symmetric (even and
odd), linear_ramp, maximum, minimum, mean, median, empty, and a callable), built from
``lax.pad``, slices and concatenations as ``jax.numpy`` does."""
from __future__ import annotations

import numpy as np

from traxla import lax, tree_util
from traxla.ir import dtypes
from traxla.tracer.values import is_concrete
from traxla.numpy._promotion import ensure_arraylike
from traxla.errors import ConcretizationTypeError
from traxla.numpy._shape import broadcast_to, squeeze, flip
from traxla.numpy._diagonals_tiles import repeat
from traxla.numpy._creation import linspace, zeros_like, asarray
from traxla.numpy._ufuncs import round as _round
from traxla.numpy._vectorize import apply_along_axis
from traxla.numpy._quantiles import median
from traxla.numpy._reductions import max as amax, mean, min as amin
from traxla.api import jit


def _broadcast_to_pairs(nvals, nd, name):
    def concrete(x):
        if hasattr(x, "aval") and not is_concrete(x):
            raise ConcretizationTypeError(f"Abstract tracer value encountered where concrete "
                                          f"value is expected: {x}\n{name} argument of jnp.pad")
        return np.asarray(x) if hasattr(x, "aval") else x
    try:
        nvals = np.asarray(tree_util.tree_map(concrete, nvals))
    except ValueError as e:
        if "inhomogeneous" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {nvals}") from e
        raise

    def as_scalar(v):
        if not np.shape(v):
            return v  # NumPy integers, as JAX keeps them (they print as np.int64(...))
        raise TypeError(f"`{name}` entries must be the same shape: {nvals}")
    if nvals.shape == (nd, 2):
        return tuple((as_scalar(v[0]), as_scalar(v[1])) for v in nvals)
    if nvals.shape == (1, 2):
        pair = as_scalar(nvals[0, 0]), as_scalar(nvals[0, 1])
        return tuple(pair for _ in range(nd))
    if nvals.shape == (2,):
        pair = as_scalar(nvals[0]), as_scalar(nvals[1])
        return tuple(pair for _ in range(nd))
    if nvals.shape == (1,):
        v = as_scalar(nvals[0])
        return tuple((v, v) for _ in range(nd))
    if nvals.shape == ():
        v = as_scalar(nvals.flat[0])
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {nvals.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _nonempty_axes(array, pad_width, mode):
    """The axes that ``mode`` (wrap, edge, reflect, symmetric) pads from the array's own
    entries: those of nonzero length; an empty axis may take no padding."""
    for i in range(np.ndim(array)):
        if array.shape[i] > 0:
            yield i
        elif pad_width[i][0] > 0 or pad_width[i][1] > 0:
            raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(array, pad_width, constant_values):
    nd = np.ndim(array)
    constant_values = lax._convert_element_type(constant_values, array.dtype,
                                                array.aval.weak_type)
    cv_nd = np.ndim(constant_values)
    if cv_nd == 0:
        return lax.pad(array, constant_values, [(lo, hi, 0) for lo, hi in pad_width])
    if cv_nd == 1:
        if constant_values.shape[-1] == 1:
            return lax.pad(array, squeeze(constant_values), [(lo, hi, 0) for lo, hi in pad_width])
        if constant_values.shape[-1] != 2:
            raise ValueError("jnp.pad: constant_values has unsupported shape "
                             f"{constant_values.shape}. If the shape is 1D or 2D, the last "
                             "dimension must be of size 1 or 2.")
    constant_values = broadcast_to(constant_values, (nd, 2))
    for i in range(nd):
        widths = [(0, 0, 0)] * nd
        if pad_width[i][0] != 0:
            widths[i] = (pad_width[i][0], 0, 0)
            array = lax.pad(array, constant_values[i, 0], widths)
        if pad_width[i][1] != 0:
            widths[i] = (0, pad_width[i][1], 0)
            array = lax.pad(array, constant_values[i, 1], widths)
    return array


def _pad_wrap(array, pad_width):
    for i in _nonempty_axes(array, pad_width, "wrap"):
        size = array.shape[i]
        left_repeats, left_rem = divmod(pad_width[i][0], size)
        right_repeats, right_rem = divmod(pad_width[i][1], size)
        parts = []
        if left_rem > 0:
            parts.append(lax.slice_in_dim(array, size - left_rem, size, axis=i))
        parts += (left_repeats + right_repeats + 1) * [array]
        if right_rem > 0:
            parts.append(lax.slice_in_dim(array, 0, right_rem, axis=i))
        array = lax.concatenate(parts, dimension=i)
    return array


def _pad_symmetric_or_reflect(array, pad_width, mode, reflect_type):
    for i in _nonempty_axes(array, pad_width, mode):
        axis_size = array.shape[i]
        if pad_width[i][0] == 0 and pad_width[i][1] == 0:
            continue

        def build(array, padding, before):
            edge = (lax.slice_in_dim(array, 0, 1, axis=i) if before
                    else lax.slice_in_dim(array, -1, None, axis=i))
            offset = 1 if (mode == "reflect" and axis_size > 1) else 0
            while padding > 0:
                curr = min(padding, axis_size - offset)
                padding -= curr
                if before:
                    start, stop = offset, offset + curr
                else:
                    start = -(curr + offset)
                    stop = None if (mode == "symmetric" or axis_size == 1) else -1
                x = flip(lax.slice_in_dim(array, start, stop, axis=i), axis=i)
                if reflect_type == "odd":
                    x = 2 * edge - x
                    if axis_size > 1:
                        edge = (lax.slice_in_dim(x, 0, 1, axis=i) if before
                                else lax.slice_in_dim(x, -1, None, axis=i))
                array = lax.concatenate([x, array] if before else [array, x], dimension=i)
            return array
        array = build(array, pad_width[i][0], True)
        array = build(array, pad_width[i][1], False)
    return array


def _pad_edge(array, pad_width):
    for i in _nonempty_axes(array, pad_width, "edge"):
        n = array.shape[i]
        before, after = pad_width[i]
        pad_before = repeat(lax.slice_in_dim(array, 0, 1, axis=i), before, axis=i)
        pad_after = repeat(lax.slice_in_dim(array, n - 1, n, axis=i), after, axis=i)
        array = lax.concatenate([pad_before, array, pad_after], dimension=i)
    return array


def _pad_linear_ramp(array, pad_width, end_values):
    weak = array.aval.weak_type
    for axis in range(np.ndim(array)):
        edge_before = lax.slice_in_dim(array, 0, 1, axis=axis)
        edge_after = lax.slice_in_dim(array, -1, None, axis=axis)
        ramp_before = linspace(end_values[axis][0], edge_before.squeeze(axis),
                               num=pad_width[axis][0], endpoint=False, dtype=array.dtype,
                               axis=axis)
        ramp_before = lax._convert_element_type(ramp_before, array.dtype, weak)
        ramp_after = linspace(end_values[axis][1], edge_after.squeeze(axis),
                              num=pad_width[axis][1], endpoint=False, dtype=array.dtype,
                              axis=axis)
        ramp_after = flip(lax._convert_element_type(ramp_after, array.dtype, weak), axis)
        array = lax.concatenate([ramp_before, array, ramp_after], dimension=axis)
    return array


def _pad_stats(array, pad_width, stat_length, stat_func):
    weak = array.aval.weak_type
    for i in range(np.ndim(array)):
        if stat_length is None:
            stat_before = stat_after = stat_func(array, axis=i, keepdims=True)
        else:
            n = array.shape[i]
            length_before, length_after = stat_length[i]
            if length_before == 0 or length_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            length_before, length_after = min(length_before, n), min(length_after, n)
            stat_before = stat_func(lax.slice_in_dim(array, 0, length_before, axis=i), axis=i,
                                    keepdims=True)
            stat_after = stat_func(lax.slice_in_dim(array, -length_after, None, axis=i), axis=i,
                                   keepdims=True)
        if dtypes.is_int(array.dtype):
            stat_before, stat_after = _round(stat_before), _round(stat_after)
        stat_before = lax._convert_element_type(stat_before, array.dtype, weak)
        stat_after = lax._convert_element_type(stat_after, array.dtype, weak)
        before, after = pad_width[i]
        array = lax.concatenate([repeat(stat_before, before, axis=i), array,
                                 repeat(stat_after, after, axis=i)], dimension=i)
    return array


def _pad_empty(array, pad_width):
    for i in range(np.ndim(array)):
        shape_before = array.shape[:i] + (pad_width[i][0],) + array.shape[i + 1:]
        shape_after = array.shape[:i] + (pad_width[i][1],) + array.shape[i + 1:]
        array = lax.concatenate([zeros_like(array, shape=shape_before), array,
                                 zeros_like(array, shape=shape_after)], dimension=i)
    return array


def _pad_func(array, pad_width, func, **kwargs):
    padded = _pad_constant(array, pad_width, asarray(0))
    for axis in range(np.ndim(padded)):
        padded = apply_along_axis(func, axis, padded, pad_width[axis], axis, kwargs)
    return padded


def _pad_impl(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
    array = asarray(array)
    nd = np.ndim(array)
    if nd == 0:
        return array
    stat_funcs = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}
    pad_width = _broadcast_to_pairs(pad_width, nd, "pad_width")
    if np.any(np.array(pad_width) < 0):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(array, pad_width, asarray(constant_values))
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(array, pad_width, str(mode), reflect_type)
    if mode == "edge":
        return _pad_edge(array, pad_width)
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, pad_width, _broadcast_to_pairs(end_values, nd, "end_values"))
    if mode in stat_funcs:
        if stat_length is not None:
            stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
        return _pad_stats(array, pad_width, stat_length, stat_funcs[str(mode)])
    return _pad_empty(array, pad_width)


_pad = None


def _pad_jit():
    global _pad
    if _pad is None:
        _pad_impl.__name__ = "_pad"
        _pad = jit(_pad_impl, static_argnums=(1, 2, 4, 5, 6))
    return _pad


_ALLOWED_KWARGS = {
    "empty": [], "edge": [], "wrap": [], "constant": ["constant_values"],
    "linear_ramp": ["end_values"], "maximum": ["stat_length"], "mean": ["stat_length"],
    "median": ["stat_length"], "minimum": ["stat_length"], "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


def pad(array, pad_width, mode="constant", **kwargs):
    """``array`` padded by ``pad_width`` per axis in the given NumPy ``mode``."""
    array = ensure_arraylike("pad", array)
    pad_width = _broadcast_to_pairs(pad_width, np.ndim(array), "pad_width")
    if pad_width and not all(isinstance(p, (int, np.integer)) for pair in pad_width for p in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_func(asarray(array), pad_width, mode, **kwargs)
    try:
        unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
    except KeyError:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    constant_values = kwargs.get("constant_values", 0)
    stat_length = kwargs.get("stat_length", None)
    end_values = kwargs.get("end_values", 0)
    reflect_type = kwargs.get("reflect_type", "even")
    if isinstance(end_values, list):
        end_values = _broadcast_to_pairs(end_values, np.ndim(array), "end_values")
    if isinstance(stat_length, list):
        stat_length = _broadcast_to_pairs(stat_length, np.ndim(array), "stat_length")
    return _pad_jit()(array, pad_width, mode, constant_values, stat_length, end_values,
                      reflect_type)
