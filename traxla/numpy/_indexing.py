"""``x[idx]`` for integers, slices, None and Ellipsis (static slicing, as JAX
emits it: one ``slice``, then ``rev``, ``squeeze`` and ``expand_dims``), and
for traced integer scalars (``dynamic_slice``). Integer-array (advanced)
indexing needs gather and is refused with a clear error."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir import dtypes
from ..tracer import Tracer


def _is_int(i) -> bool:
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_traced_int(i) -> bool:
    return hasattr(i, "aval") and not i.aval.shape and dtypes.is_int(i.aval.dtype)


def _expand_ellipsis(idx, ndim):
    n_ellipsis = sum(1 for i in idx if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array indexed with {consumed} "
                         "regular indices.")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(i)
    if n_ellipsis == 0:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _refuse(i, position):
    if isinstance(i, (list, np.ndarray)) or hasattr(i, "aval"):
        dt = getattr(getattr(i, "aval", None), "dtype", None) or np.asarray(i).dtype
        if np.dtype(dt) == np.bool_:
            raise IndexError(f"Array boolean indices must be concrete; got bool{list(np.shape(i))}"
                             " (boolean masks need dynamic shapes, which JAX does not support "
                             "under jit)")
        if not dtypes.is_int(np.dtype(dt)):
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt} "
                            f"at position {position}, indexer value {i}")
        raise NotImplementedError(
            f"Integer-array (advanced) indexing at position {position} needs the gather "
            "primitive, which traxla does not implement yet; use static slices, integers or "
            "lax.dynamic_slice.")
    raise TypeError(f"Indexing mode not supported: index {i!r} of type {type(i).__name__} at "
                    f"position {position}.")


def getitem(arr, idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    shape = lax.shape_of(arr)
    expanded = _expand_ellipsis(idx, len(shape))
    static = all(_is_int(i) or i is None or isinstance(i, slice) and _static_slice(i)
                 for i in expanded)
    if static:
        return _static_getitem(arr, expanded, shape)
    if all(_is_int(i) or i is None or _is_traced_int(i) or isinstance(i, slice) and _static_slice(i)
           and i.step in (None, 1, -1) for i in expanded):
        return _dynamic_getitem(arr, expanded, shape)
    for pos, i in enumerate(expanded):
        if not (_is_int(i) or i is None or isinstance(i, slice) or _is_traced_int(i)):
            _refuse(i, pos)
    raise IndexError(f"Unsupported index {idx!r}: slices must have static (Python int) bounds.")


def _static_slice(s: slice) -> bool:
    return all(v is None or _is_int(v) for v in (s.start, s.stop, s.step))


def _static_getitem(arr, idx, shape):
    start, limit, strides, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis_dims.append(len(start) - len(squeeze_axes) + len(newaxis_dims))
            continue
        size = shape[axis]
        if _is_int(i):
            if not -size <= i < size:
                raise IndexError(f"index {int(i)} is out of bounds for axis {axis} with size {size}")
            s = int(i) + size if i < 0 else int(i)
            start.append(s)
            limit.append(s + 1)
            strides.append(1)
            squeeze_axes.append(axis)
        else:
            if i.step == 0:
                raise ValueError("slice step cannot be zero")
            lo, hi, step = i.indices(size)
            if step < 0:
                new_start = min(size, hi + 1 + abs(lo - hi - 1) % abs(step))
                start.append(new_start)
                limit.append(max(new_start, lo + 1))
                strides.append(abs(step))
                rev_axes.append(axis)
            else:
                start.append(lo)
                limit.append(max(lo, hi))
                strides.append(step)
        axis += 1
    strides_param = None if all(s == 1 for s in strides) else strides
    trivial = strides_param is None and all(
        (s, l) == (0, d) for s, l, d in zip(start, limit, shape)) and len(start) == len(shape)
    result = arr if trivial else lax.slice(arr, start, limit, strides_param)
    if rev_axes:
        result = lax.rev(result, tuple(rev_axes))
    if squeeze_axes:
        result = lax.squeeze(result, tuple(squeeze_axes))
    if newaxis_dims:
        result = lax.expand_dims(result, tuple(newaxis_dims))
    return result


def _index_array(i):
    """``jnp.asarray`` of a scalar index (a constant for Python and NumPy integers)."""
    if hasattr(i, "aval"):
        return i
    if isinstance(i, int):
        return lax._convert_element_type(i, dtypes.python_scalar_dtype(i), True)
    return lax._convert_element_type(i, dtypes.canonicalize(np.asarray(i).dtype), False)


def _dynamic_getitem(arr, idx, shape):
    """Scalar (possibly traced) integers and unit-step slices, as one ``dynamic_slice``
    whose start indices are normalized for negative values (as JAX emits it)."""
    starts, sizes, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], []
    axis = 0
    for i in idx:
        if i is None:
            newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
            continue
        if isinstance(i, slice):
            lo, hi, step = i.indices(shape[axis])
            if step < 0:
                new_start = hi + 1 + abs(lo - hi - 1) % abs(step)
                starts.append(new_start)
                sizes.append(max(0, lo + 1 - new_start))
                rev_axes.append(axis)
            else:
                starts.append(lo)
                sizes.append(max(0, hi - lo))
        else:
            if shape[axis] == 0:
                raise IndexError(f"index is out of bounds for axis {axis} with size 0")
            starts.append(_index_array(i))
            sizes.append(1)
            squeeze_axes.append(axis)
        axis += 1
    if len(starts) > 1:
        starts = [lax._convert_element_type(s, dtypes.int32, False) for s in starts]
    result = lax.dynamic_slice(arr, starts, sizes)
    if rev_axes:
        result = lax.rev(result, tuple(rev_axes))
    if squeeze_axes:
        result = lax.squeeze(result, tuple(squeeze_axes))
    if newaxis_dims:
        result = lax.expand_dims(result, tuple(newaxis_dims))
    return result


del Tracer
