"""Shape manipulation: reshape, transpose, broadcast_to, concatenate, stack, split, ..."""
from __future__ import annotations

import math
import operator
import warnings

from traxla.ir.shape_poly import is_symbolic

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.numpy._promotion import (_is_arraylike, asarray_scalar, check_arraylike,
                                     promote_dtypes, ensure_arraylike)
from traxla.numpy._ufuncs import _broadcast_arrays
from traxla.numpy._jitutil import as_jit_result
import traxla.numpy._creation as _numpy__creation


def _ndim(x):
    return len(lax.shape_of(x))


def canonicalize_axis(axis, ndim):
    """``axis`` (an index, negative counting from the end) as a dimension in ``range(ndim)``;
    ValueError when it is out of bounds."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _canon_axis(axis, ndim, fun="axis"):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"{fun} {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


def _compute_newshape(shape, newshape):
    """Fixes a -1 entry of ``newshape``, with JAX's errors (TypeError for all of them)."""
    orig = newshape
    newshape = tuple(lax._concrete_shape(newshape))  # export's symbolic dimensions stay
    size = math.prod(shape)
    shape = tuple(shape)
    if sum(d == -1 for d in newshape) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{orig}")
    if -1 in newshape:
        known = math.prod(d for d in newshape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into shape "
                            f"{orig} because the product of specified axis sizes ({known}) "
                            f"does not evenly divide {size}")
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    if math.prod(newshape) != size:
        raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into shape "
                        f"{orig} (size {math.prod(newshape)})")
    return newshape


def reshape(a, shape=None, order="C", *, newshape=None):
    shape = newshape if shape is None else shape
    a = asarray_scalar(a)
    newshape = _compute_newshape(lax.shape_of(a), shape)
    if order == "C":
        return lax.reshape(a, newshape)
    if order == "F":  # column-major: reverse the dimensions, reshape, reverse back
        nd = len(lax.shape_of(a))
        return transpose(lax.reshape(a, newshape[::-1], tuple(range(nd))[::-1]))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C"):
    a = ensure_arraylike("ravel", a)  # a NumPy input becomes an Array first, as in JAX
    return reshape(a, (math.prod(lax.shape_of(a)),), order)


def transpose(a, axes=None):
    nd = _ndim(a)
    axes = tuple(range(nd))[::-1] if axes is None else tuple(_canon_axis(x, nd) for x in axes)
    return lax._lift(lax.transpose(asarray_scalar(a), axes))


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
    return as_jit_result(lax.squeeze(a, axes))


def broadcast_to(array, shape):
    array = lax._asarray(array)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(
        d if is_symbolic(d) else int(d) for d in shape)
    return lax.broadcast_to(array, shape)


def broadcast_arrays(*args):
    check_arraylike("broadcast_arrays", *args)
    return [lax._lift(x) for x in _broadcast_arrays(*[lax._asarray(a) for a in args])]


def _atleast(ndmin):
    def fn(*arys):
        check_arraylike(f"atleast_{ndmin}d", *arys)
        if len(arys) == 1:
            return _numpy__creation.array(arys[0], copy=False, ndmin=ndmin)
        return [_numpy__creation.array(a, copy=False, ndmin=ndmin) for a in arys]
    fn.__name__ = f"atleast_{ndmin}d"
    return jit(fn)


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)


def concatenate(arrays, axis=0, dtype=None):
    arrays = list(arrays)
    check_arraylike("concatenate", *arrays)
    arrays = [lax._asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], 0, dtype)
    nd = _ndim(arrays[0])
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _canon_axis(axis, nd)
    shapes = [lax.shape_of(a) for a in arrays]
    if any(len(s) != nd for s in shapes) or any(
            s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise TypeError("jnp.concatenate: Cannot concatenate arrays with shapes that differ in "
                        "dimensions other than the one being concatenated: concatenating along "
                        f"dimension {axis} for shapes {', '.join(map(str, shapes))}.")
    if dtype is None:
        arrays = promote_dtypes(*arrays)
    else:
        arrays = [_numpy__creation.asarray(a, dtype=dtype) for a in arrays]
    return lax.concatenate(arrays, axis)


def stack(arrays, axis=0, dtype=None):
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if hasattr(arrays, "aval") or isinstance(arrays, np.ndarray):  # one array: stack its rows
        axis = _canon_axis(axis, _ndim(arrays))
        return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
    arrays = list(arrays)
    shapes = {lax.shape_of(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("jnp.stack: all input arrays must have the same shape, got shapes "
                         f"{', '.join(str(lax.shape_of(a)) for a in arrays)}.")
    if dtype is not None:
        arrays = [lax.convert_element_type(a, dtype) for a in arrays]
    else:
        arrays = promote_dtypes(*arrays)
    axis = _canon_axis(axis, _ndim(arrays[0]) + 1)
    return lax._stack(arrays, axis)


def unstack(x, /, *, axis=0):
    if not _ndim(x):
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    return tuple(lax._unstack(x, _canon_axis(axis, _ndim(x))))


def vstack(tup, dtype=None):
    check_arraylike("vstack", *tup)
    return concatenate([atleast_2d(m) for m in tup], axis=0, dtype=dtype)


def hstack(tup, dtype=None):
    check_arraylike("hstack", *tup)
    arrs = [atleast_1d(m) for m in tup]
    return concatenate(arrs, axis=0 if _ndim(arrs[0]) == 1 else 1, dtype=dtype)


def _split(op, ary, indices_or_sections, axis=0):
    shape = lax.shape_of(ary)
    axis = _canon_axis(axis, len(shape))
    size = shape[axis]
    # Indices as a list, a NumPy array or a (concrete) jax Array, as JAX's; a 0-d array is a
    # number of sections.
    if isinstance(indices_or_sections, (tuple, list)) or (
            not isinstance(indices_or_sections, (int, np.integer))
            and getattr(indices_or_sections, "ndim", 0) > 0):
        bounds = np.asarray([0] + [int(i) for i in indices_or_sections] + [size])
        sizes = list(np.diff(np.clip(bounds, 0, size)))
    else:
        n = int(indices_or_sections)
        part, rest = divmod(size, n)
        if rest == 0:
            sizes = [part] * n
        elif op == "array_split":
            sizes = [part + 1] * rest + [part] * (n - rest)
        else:
            raise ValueError(f"array split does not result in an equal division: rest is {rest}")
    # NumPy integers, as JAX builds them (they print as np.int64(...) in the split params)
    return list(lax.split(ary, [np.int64(s) for s in sizes], axis=axis))


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis)


def _flip_impl(m, axis=None):
    nd = _ndim(m)
    if axis is None:
        return lax.rev(m, list(range(nd)))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return lax.rev(m, [_canon_axis(a, nd) for a in axes])


_flip_impl.__name__ = "_flip"
_flip = jit(_flip_impl, static_argnums=(1,), static_argnames=("axis",))


def flip(m, axis=None):
    check_arraylike("flip", m)
    m = lax._asarray(m)
    if axis is not None and not isinstance(axis, (int, np.integer)):
        axis = tuple(int(a) for a in axis)
    elif axis is not None:
        axis = int(axis)
    return _flip(m, axis)


def _warn_unless_arraylike(fun_name, a):
    """JAX's deprecation warning (2025-2-20) for a non-array argument (a list, a struct)."""
    if not _is_arraylike(a):
        warnings.warn(f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                      "position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)


def _jax_array_of(a):
    m = getattr(a, "__jax_array__", None)
    return a if m is None else m()


def shape(a):
    """As JAX's: ``a.shape`` of anything that has one (an Array, a ShapeDtypeStruct)."""
    if hasattr(a, "shape"):
        return a.shape
    _warn_unless_arraylike("shape", a)
    return np.shape(_jax_array_of(a))


def ndim(a):
    if hasattr(a, "ndim"):
        return a.ndim
    _warn_unless_arraylike("ndim", a)
    return np.ndim(_jax_array_of(a))


def size(a, axis=None):
    _warn_unless_arraylike("size", a)
    if axis is None and hasattr(a, "size"):
        return a.size
    s = shape(a)
    if axis is None:
        return math.prod(s)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return math.prod(s[operator.index(i)] for i in axes)
