"""Shape manipulation: reshape, transpose, broadcast_to, concatenate, stack, split, ..."""
from __future__ import annotations

import math

import numpy as np

from .. import lax
from ._promotion import asarray_scalar, broadcast_shapes, promote_dtypes


def _ndim(x):
    return len(lax.shape_of(x))


def _canon_axis(axis, ndim, fun="axis"):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{fun} {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _compute_newshape(shape, newshape):
    newshape = (newshape,) if isinstance(newshape, (int, np.integer)) else tuple(newshape)
    newshape = tuple(int(d) for d in newshape)
    if sum(d == -1 for d in newshape) > 1:
        raise ValueError("can only specify one unknown dimension")
    size = math.prod(shape)
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {tuple(shape)} (size {size}) into shape "
                            f"{newshape}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != size:
        raise TypeError(f"cannot reshape array of shape {tuple(shape)} (size {size}) into shape "
                        f"{newshape} (size {math.prod(newshape)})")
    return newshape


def reshape(a, shape=None, order="C", *, newshape=None):
    shape = newshape if shape is None else shape
    a = asarray_scalar(a)
    if order != "C":
        raise NotImplementedError("reshape only supports order='C'")
    return lax.reshape(a, _compute_newshape(lax.shape_of(a), shape))


def ravel(a, order="C"):
    return reshape(a, (math.prod(lax.shape_of(a)),), order)


def transpose(a, axes=None):
    nd = _ndim(a)
    axes = tuple(range(nd))[::-1] if axes is None else tuple(_canon_axis(x, nd) for x in axes)
    return lax.transpose(asarray_scalar(a), axes)


def matrix_transpose(x):
    nd = _ndim(x)
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    nd = _ndim(a)
    perm = list(range(nd))
    a1, a2 = _canon_axis(axis1, nd), _canon_axis(axis2, nd)
    perm[a1], perm[a2] = perm[a2], perm[a1]
    return lax.transpose(a, perm)


def moveaxis(a, source, destination):
    nd = _ndim(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [_canon_axis(s, nd) for s in src]
    dst = [_canon_axis(d, nd) for d in dst]
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(a, perm)


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(asarray_scalar(a), axes)


def squeeze(a, axis=None):
    shape = lax.shape_of(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(shape) if d == 1)
    else:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(_canon_axis(x, len(shape)) for x in axes)
        for x in axes:
            if shape[x] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                                 f"one, got shape={shape} and dimensions={axes}")
    return lax.squeeze(a, axes)


def broadcast_to(array, shape):
    array = asarray_scalar(array)
    shape = (shape,) if isinstance(shape, int) else tuple(int(d) for d in shape)
    src = lax.shape_of(array)
    if src == shape:
        return array
    nlead = len(shape) - len(src)
    if nlead < 0 or any(s not in (1, d) for s, d in zip(src, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {src} and requested shape {shape}")
    diff = tuple(i for i, (s, d) in enumerate(zip(src, shape[nlead:])) if s != d)
    if diff:
        array = lax.squeeze(array, diff)
    kept = tuple(nlead + i for i in range(len(src)) if i not in diff)
    return lax.broadcast_in_dim(array, shape, kept)


def broadcast_arrays(*args):
    shape = broadcast_shapes(*(lax.shape_of(a) for a in args))
    return [broadcast_to(a, shape) for a in args]


def atleast_1d(x):
    return reshape(x, (1,)) if _ndim(x) == 0 else x


def concatenate(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0, dtype)
    arrays = promote_dtypes(*arrays)
    nd = _ndim(arrays[0])
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _canon_axis(axis, nd)
    shapes = [lax.shape_of(a) for a in arrays]
    if any(len(s) != nd for s in shapes) or any(
            s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than "
                        f"the one being concatenated: concatenating along dimension {axis} for "
                        f"shapes {', '.join(map(str, shapes))}.")
    if dtype is not None:
        arrays = [lax.convert_element_type(a, dtype) for a in arrays]
    return lax.concatenate(arrays, axis)


def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = {lax.shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape.")
    nd = _ndim(arrays[0]) + 1
    axis = _canon_axis(axis, nd)
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def vstack(tup):
    return concatenate([a if _ndim(a) >= 2 else reshape(a, (1, -1)) for a in tup], 0)


def hstack(tup):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if _ndim(arrs[0]) == 1 else 1)


def split(ary, indices_or_sections, axis=0):
    shape = lax.shape_of(ary)
    axis = _canon_axis(axis, len(shape))
    size = shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        n = int(indices_or_sections)
        if size % n:
            raise ValueError("array split does not result in an equal division")
        bounds = [i * (size // n) for i in range(n + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return [lax.slice_in_dim(ary, lo, max(lo, hi), 1, axis) for lo, hi in zip(bounds[:-1], bounds[1:])]


def flip(m, axis=None):
    nd = _ndim(m)
    axes = tuple(range(nd)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    return lax.rev(m, tuple(_canon_axis(a, nd) for a in axes))


def shape(a):
    return lax.shape_of(a)


def ndim(a):
    return _ndim(a)


def size(a, axis=None):
    s = lax.shape_of(a)
    return math.prod(s) if axis is None else s[axis]
