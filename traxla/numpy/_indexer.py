"""Parsing a NumPy index expression (``x[idx]``) and planning it, as ``jax.numpy`` does
(``jax/_src/numpy/indexing.py``): ``NDIndexer`` turns the index into one static ``slice``,
one ``dynamic_slice`` or one ``gather`` (the plans ``_StaticSlice``, ``_DynamicSlice``,
``_GatherIndexer``). Boolean masks must be concrete: a traced one raises
``NonConcreteBooleanIndexError``; a concrete one becomes integer arrays (``np.where``).
"""
from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from traxla import errors as _errors, lax
from traxla.errors import InconclusiveDimensionOperation
from traxla.ir import dtypes
from traxla.ir.shape_poly import int_dtype_for_shape, is_symbolic, max_dim, min_dim
from traxla.lax import slicing
from traxla.numpy._creation import _leaves, array, asarray
from traxla.numpy._promotion import result_type
from traxla.numpy._ufuncs import _broadcast_arrays, add, multiply
from traxla.runtime import ArrayImpl
from traxla.tracer import Tracer

GatherScatterMode = slicing.GatherScatterMode


class NonConcreteBooleanIndexError(_errors.NonConcreteBooleanIndexError):
    """A traced boolean mask used as an index (needs dynamic shapes); the class of
    ``traxla.errors``, built from the mask's aval."""

    def __init__(self, aval):
        super().__init__(f"Array boolean indices must be concrete; got {aval.str_short()}\n\n"
                         "Boolean masks select a data-dependent number of elements, which "
                         "needs dynamic shapes; use the three-argument jnp.where(mask, x, y) "
                         "instead.")


def _is_traced(x) -> bool:
    return isinstance(x, Tracer)


def _is_array(x) -> bool:
    return isinstance(x, (Tracer, ArrayImpl))


def _shape(x):
    return tuple(lax.shape_of(x)) if _is_array(x) else tuple(np.shape(x))


def _ndim(x) -> int:
    return len(_shape(x))


def _dtype_of(x):
    if _is_array(x):
        return lax.dtype_of(x)
    return np.asarray(x).dtype


def _int_dtype_for_shape(shape):
    return int_dtype_for_shape(shape, signed=True)


# -- parsing -----------------------------------------------------------------------------------

class IndexType(enum.Enum):
    NONE = "none"
    SLICE = "slice"
    ELLIPSIS = "ellipsis"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    ARRAY = "array"


def _is_integer_index(idx) -> bool:
    return isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_))


def _is_scalar(x) -> bool:
    return np.isscalar(x) or (isinstance(x, (np.ndarray, ArrayImpl, Tracer)) and _ndim(x) == 0)


def _is_boolean_index(i) -> bool:
    if isinstance(i, (bool, np.bool_)):
        return True
    if isinstance(i, (np.ndarray, ArrayImpl, Tracer)):
        return _dtype_of(i) == np.bool_
    return (isinstance(i, list) and bool(i)
            and all(_is_scalar(e) and np.dtype(_dtype_of(e)) == np.bool_ for e in i))


def _sequence_dtype(seq):
    leaves = list(_leaves(seq))
    if any(_is_array(leaf) for leaf in leaves):
        return result_type(*leaves)[0]
    return dtypes.canonicalize(np.asarray(seq).dtype)


def _index_type(idx, shape) -> IndexType:
    if idx is None:
        return IndexType.NONE
    if idx is Ellipsis:
        return IndexType.ELLIPSIS
    if isinstance(idx, slice):
        return IndexType.SLICE
    if _is_integer_index(idx):
        return IndexType.INTEGER
    if _is_boolean_index(idx):
        return IndexType.BOOLEAN
    if isinstance(idx, (ArrayImpl, Tracer, np.ndarray)):
        dt = _dtype_of(idx)
        if dtypes.is_int(dt):
            return IndexType.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt} "
                        f"(indexing an array of shape {tuple(shape)} with an index of shape "
                        f"{_shape(idx)})")
    if isinstance(idx, str):
        raise TypeError(f"JAX does not support string indexing; got idx={idx!r}")
    if isinstance(idx, Sequence):
        if not idx:
            return IndexType.ARRAY
        dt = _sequence_dtype(idx)
        if dt == np.bool_:
            return IndexType.BOOLEAN
        if dtypes.is_int(dt):
            return IndexType.ARRAY
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt} "
                        f"(indexing an array of shape {tuple(shape)})")
    if isinstance(idx, (float, complex, np.generic)):
        raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                        f"{np.dtype(type(idx))} (indexing an array of shape {tuple(shape)})")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                     f"integer or boolean arrays are valid indices. Got {idx}")


class ParsedIndex(NamedTuple):
    index: Any
    typ: IndexType
    consumed_axes: tuple


def _parse_indices(indices, shape):
    consumed, ellipses, types = [], [], []
    for i, idx in enumerate(indices):
        typ = _index_type(idx, shape)
        types.append(typ)
        if typ in (IndexType.NONE, IndexType.ELLIPSIS):
            consumed.append(0)
            if typ is IndexType.ELLIPSIS:
                ellipses.append(i)
        elif typ is IndexType.BOOLEAN:
            consumed.append(_ndim(idx) if not isinstance(idx, list) else np.ndim(idx))
        else:
            consumed.append(1)
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    total = sum(consumed)
    if total > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} were "
                         f"indexed (array of shape {tuple(shape)}, index {tuple(indices)!r})")
    if ellipses:
        consumed[ellipses[0]] = len(shape) - total
    out, dim = [], 0
    for index, typ, n in zip(indices, types, consumed):
        axes = tuple(range(dim, dim + n))
        dim += n
        out.append(ParsedIndex(index, typ, axes))
    return out


def _eliminate_deprecated_list_indexing(idx):
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, Sequence) and not isinstance(idx, (str, np.ndarray)):
        if any(_should_unpack_list_index(i) for i in idx):
            how = "use `arr[tuple(seq)]` instead of `arr[seq]`"
        else:
            how = "use `arr[array(seq)]` instead of `arr[seq]`"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                        f"{how}. See https://github.com/jax-ml/jax/issues/4564 for more "
                        "information.")
    return (idx,)


def _should_unpack_list_index(x):
    return ((isinstance(x, (np.ndarray, ArrayImpl, Tracer)) and _ndim(x) != 0)
            or isinstance(x, (Sequence, slice)) or x is Ellipsis or x is None)


class _StaticSlice(NamedTuple):
    start_indices: list
    limit_indices: list
    strides: list | None
    rev_axes: list
    squeeze_axes: list
    newaxis_dims: list

    def is_trivial_slice(self, shape):
        if self.strides is not None or len(shape) != len(self.start_indices):
            return False
        return all((s, l) == (0, d) for s, l, d in zip(self.start_indices, self.limit_indices,
                                                     shape))


class _DynamicSlice(NamedTuple):
    start_indices: list
    slice_sizes: list
    rev_axes: list
    squeeze_axes: list
    newaxis_dims: list
    trivial_slicing: bool
    normalize_indices: bool


class _GatherIndexer(NamedTuple):
    slice_shape: list
    gather_slice_shape: list
    gather_indices: Any
    dnums: slicing.GatherDimensionNumbers
    unique_indices: bool
    indices_are_sorted: bool
    reversed_y_dims: list
    newaxis_dims: tuple
    scalar_bool_dims: list


def _slice_element_static(elt) -> bool:
    return elt is None or not _is_traced(elt)


class NDIndexer:
    def __init__(self, shape, indices):
        self.shape = tuple(shape)
        self.indices = list(indices)

    @classmethod
    def from_raw_indices(cls, idx, shape):
        return cls(shape, _parse_indices(_eliminate_deprecated_list_indexing(idx), shape))

    def validate_static_indices(self, normalize_indices=True):
        for idx in self.indices:
            if idx.typ is IndexType.INTEGER:
                i = operator.index(idx.index)
                axis, = idx.consumed_axes
                size = self.shape[axis]
                normed = i + size if normalize_indices and i < 0 else i
                if not 0 <= normed < size:
                    raise IndexError(f"index {i} out of bounds for axis {axis} with size {size}"
                                     f" (normalize_indices={normalize_indices})")

    def validate_slices(self):
        for position, idx in enumerate(self.indices):
            if idx.typ is IndexType.SLICE:
                s = idx.index
                if not all(_slice_element_static(v) for v in (s.start, s.stop, s.step)):
                    raise IndexError(f"Slice entries must be static integers. Got {s} at "
                                     f"position {position}")

    def expand_bool_indices(self):
        out = []
        for position, idx in enumerate(self.indices):
            if idx.typ is not IndexType.BOOLEAN:
                out.append(idx)
                continue
            if _is_traced(idx.index):
                raise NonConcreteBooleanIndexError(idx.index.aval)
            if np.ndim(_host(idx.index)) == 0:
                out.append(ParsedIndex(bool(_host(idx.index)), idx.typ, ()))
                continue
            mask = np.asarray(_host(idx.index))
            expected = [self.shape[i] for i in idx.consumed_axes]
            if not all(s1 in (0, s2) for s1, s2 in zip(mask.shape, expected)):
                raise IndexError("boolean index did not match shape of indexed array in index "
                                 f"{position}: got {mask.shape}, expected {tuple(expected)}")
            out.extend(ParsedIndex(i, IndexType.ARRAY, (axis,))
                       for i, axis in zip(np.where(mask), idx.consumed_axes))
        return NDIndexer(self.shape, out)

    def expand_scalar_bool_indices(self):
        new_shape = list(self.shape)
        new_indices = list(self.indices)
        dim = 0
        for i, idx in enumerate(self.indices):
            if idx.typ is IndexType.BOOLEAN and np.ndim(idx.index) == 0:
                new_shape.insert(i, 1)
                new_indices[i] = ParsedIndex(np.arange(int(idx.index)), IndexType.ARRAY, (dim,))
                dim += 1
            else:
                n = len(idx.consumed_axes)
                new_indices[i] = ParsedIndex(idx.index, idx.typ, tuple(range(dim, dim + n)))
                dim += n
        return NDIndexer(tuple(new_shape), new_indices)

    def convert_sequences_to_arrays(self):
        return NDIndexer(self.shape, [
            ParsedIndex(asarray(i.index), i.typ, i.consumed_axes)
            if isinstance(i.index, Sequence) else i for i in self.indices])

    def expand_ellipses(self):
        out, consumed = [], 0
        for idx in self.indices:
            consumed += len(idx.consumed_axes)
            if idx.typ is IndexType.ELLIPSIS:
                out.extend(ParsedIndex(slice(None), IndexType.SLICE, (a,))
                           for a in idx.consumed_axes)
            else:
                out.append(idx)
        out.extend(ParsedIndex(slice(None), IndexType.SLICE, (a,))
                   for a in range(consumed, len(self.shape)))
        return NDIndexer(self.shape, out)

    def normalize_indices(self):
        out = []
        for idx in self.indices:
            if idx.typ is IndexType.INTEGER:
                axis, = idx.consumed_axes
                size = self.shape[axis]
                if isinstance(idx.index, np.unsignedinteger):
                    normed = idx.index
                else:
                    normed = idx.index + size if idx.index < 0 else idx.index
                out.append(ParsedIndex(normed, idx.typ, idx.consumed_axes))
            elif idx.typ is IndexType.ARRAY:
                axis, = idx.consumed_axes
                index = idx.index
                if isinstance(index, np.ndarray):  # as JAX canonicalizes constants (int64 -> int32)
                    index = np.asarray(index, dtypes.canonicalize(index.dtype))
                if dtypes.is_unsigned_int(_dtype_of(index)):
                    normed = index
                else:
                    axis_size = self.shape[axis]
                    if is_symbolic(axis_size):  # the size as a value, as JAX's
                        size = lax.convert_element_type(axis_size.__jax_array__(),
                                                        _dtype_of(index))
                    elif _is_array(index):
                        size = lax._const(index, axis_size)
                    else:
                        size = np.array(axis_size, _dtype_of(index))
                    normed = lax.select(index < 0, lax.add(index, size), index)
                out.append(ParsedIndex(normed, idx.typ, idx.consumed_axes))
            else:
                out.append(idx)
        return NDIndexer(self.shape, out)

    def is_advanced_int_indexer(self):
        return any(idx.typ in (IndexType.ARRAY, IndexType.BOOLEAN) and _ndim_of(idx.index) > 0
                   for idx in self.indices)

    # -- strategies -------------------------------------------------------------------------

    def to_static_slice(self, *, normalize_indices=True, mode=None) -> _StaticSlice:
        parsed_mode = (GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                       else GatherScatterMode.from_any(mode))
        if parsed_mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
            raise ValueError("static_slice requires mode='promise_in_bounds' or mode='clip'")
        if parsed_mode is GatherScatterMode.PROMISE_IN_BOUNDS:
            self.validate_static_indices(normalize_indices=normalize_indices)
        self.validate_slices()
        for position, p in enumerate(self.indices):
            if p.typ in (IndexType.ARRAY, IndexType.BOOLEAN):
                raise TypeError("static_slice: indices must be static scalars or slices. Got "
                                f"index of type {type(p.index)} at position {position}")
        start, limit, strides, rev, squeeze, newaxis = [], [], [], [], [], []
        for p in self.expand_ellipses().indices:
            if p.typ is IndexType.NONE:
                newaxis.append(len(start) - len(squeeze) + len(newaxis))
            elif p.typ is IndexType.INTEGER:
                axis, = p.consumed_axes
                if self.shape[axis] == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                s = int(p.index)
                if normalize_indices and s < 0:
                    s += self.shape[axis]
                s = min(max(s, 0), self.shape[axis] - 1)
                start.append(s)
                limit.append(s + 1)
                strides.append(1)
                squeeze.append(axis)
            elif p.typ is IndexType.SLICE:
                axis, = p.consumed_axes
                size = self.shape[axis]
                lo, hi, step = p.index.indices(size)
                if step < 0:
                    new_start = min(size, hi + 1 + abs(lo - hi - 1) % abs(step))
                    start.append(new_start)
                    limit.append(max(new_start, lo + 1))
                    strides.append(abs(step))
                    rev.append(axis)
                else:
                    start.append(lo)
                    limit.append(max(lo, hi))
                    strides.append(step)
            else:
                raise TypeError(f"static_slice: unrecognized index {p.index}")
        return _StaticSlice(start, limit, None if all(s == 1 for s in strides) else strides, rev,
                            squeeze, newaxis)

    def to_dynamic_slice(self, *, normalize_indices=True, mode=None) -> _DynamicSlice:
        if mode is not None:
            parsed_mode = GatherScatterMode.from_any(mode)
            if parsed_mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
                raise ValueError("dynamic_slice requires mode='promise_in_bounds' or mode='clip'")
        for position, p in enumerate(self.indices):
            if p.typ is IndexType.SLICE:
                if p.index.step is not None and p.index.step not in (-1, 1):
                    raise TypeError("dynamic_slice: only unit steps supported in slice. Got "
                                    f"{p.index} at position {position}")
            elif p.typ is IndexType.ARRAY:
                if isinstance(p.index, Sequence) or _shape(p.index) != ():
                    raise TypeError("dynamic_slice: only scalar indices allowed. Got index of "
                                    f"type {type(p.index)} at position {position}")
            elif p.typ is IndexType.BOOLEAN:
                raise TypeError("dynamic_slice: indices must be scalars or slices. Got index of "
                                f"type {type(p.index)} at position {position}")
        start, sizes, rev, squeeze, newaxis = [], [], [], [], []
        trivial = True
        for p in self.expand_ellipses().indices:
            if p.typ is IndexType.NONE:
                newaxis.append(len(start) - len(squeeze) + len(newaxis))
            elif p.typ in (IndexType.INTEGER, IndexType.ARRAY):
                trivial = False
                index = _index_scalar(p.index)
                axis, = p.consumed_axes
                if self.shape[axis] == 0:
                    raise IndexError(f"index is out of bounds for axis {axis} with size 0")
                start.append(index)
                sizes.append(1)
                squeeze.append(axis)
            elif p.typ is IndexType.SLICE:
                if p.index != slice(None):
                    trivial = False
                axis, = p.consumed_axes
                size = self.shape[axis]
                lo, hi, step = p.index.indices(size)
                if step < 0:
                    new_start = hi + 1 + abs(lo - hi - 1) % abs(step)
                    start.append(new_start)
                    sizes.append(max(0, lo + 1 - new_start))
                    rev.append(axis)
                else:
                    start.append(lo)
                    sizes.append(max(0, hi - lo))
            else:
                raise TypeError(f"dynamic_slice: unrecognized index {p.index}")
        if len(start) > 1:
            dt = _int_dtype_for_shape(self.shape)
            start = [lax._convert_element_type(i, dt, False) for i in start]
        return _DynamicSlice(start, sizes, rev, squeeze, newaxis, trivial, normalize_indices)

    def to_gather(self, normalize_indices=True) -> _GatherIndexer:
        return _index_to_gather(self, normalize_indices=normalize_indices)


def _host(x):
    """A concrete (non-traced) index as a NumPy value."""
    if isinstance(x, ArrayImpl):
        return np.asarray(x)
    return x


def _ndim_of(x):
    return _ndim(x) if not isinstance(x, list) else np.ndim(x)


def _index_scalar(i):
    """``jnp.asarray`` of a scalar index: Python ints stay weakly typed."""
    if _is_array(i):
        return i
    if type(i) is int:
        return lax._convert_element_type(i, dtypes.python_scalar_dtype(i), True)
    return lax._convert_element_type(i, dtypes.canonicalize(np.asarray(i).dtype), False)


# -- the gather plan -------------------------------------------------------------------------

def _index_to_gather(indexer: NDIndexer, *, normalize_indices=True) -> _GatherIndexer:
    indexer.validate_slices()
    indexer = indexer.convert_sequences_to_arrays()
    is_advanced = np.nonzero(np.array([i.typ in (IndexType.ARRAY, IndexType.INTEGER)
                                       for i in indexer.indices]))
    contiguous = bool(np.all(np.diff(is_advanced) == 1))
    indexer = indexer.expand_ellipses()
    scalar_bool_dims = [n for n, i in enumerate(indexer.indices) if i.typ is IndexType.BOOLEAN]
    indexer = indexer.expand_scalar_bool_indices()
    if normalize_indices:
        indexer = indexer.normalize_indices()

    advanced_indexes, idx_advanced_axes, x_advanced_axes = [], [], []
    if indexer.is_advanced_int_indexer():
        without_none = [(i, d) for i, d in enumerate(indexer.indices)
                        if d.typ is not IndexType.NONE]
        for j, (i, e) in enumerate(without_none):
            if e.typ in (IndexType.ARRAY, IndexType.INTEGER):
                advanced_indexes.append(asarray(e.index))
                idx_advanced_axes.append(i)
                x_advanced_axes.append(j)

    x_axis = y_axis = collapsed_y_axis = 0
    offset_dims, collapsed_slice_dims, start_index_map = [], [], []
    index_dtype = _int_dtype_for_shape(indexer.shape)
    gather_indices, gather_indices_shape = [], []
    slice_shape, newaxis_dims, reversed_y_dims, gather_slice_shape = [], [], [], []

    for idx_pos, index in enumerate(indexer.indices):
        if advanced_indexes and (contiguous and idx_pos == idx_advanced_axes[0]
                                 or not contiguous and idx_pos == 0):
            arrs = _broadcast_arrays(*advanced_indexes)
            shape = lax.shape_of(arrs[0])
            start_dim = len(gather_indices_shape)
            gather_indices.extend((lax._convert_element_type(a, index_dtype, False), start_dim)
                                  for a in arrs)
            gather_indices_shape += shape
            start_index_map.extend(x_advanced_axes)
            collapsed_slice_dims.extend(x_advanced_axes)
            slice_shape.extend(shape)
            y_axis += len(shape)
            collapsed_y_axis += len(shape)

        if idx_pos in idx_advanced_axes:
            x_axis += 1
            gather_slice_shape.append(1)
            continue

        if index.typ in (IndexType.INTEGER, IndexType.ARRAY) and _ndim_of(index.index) == 0:
            if indexer.shape[x_axis] == 0:
                raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
            i_converted = lax._convert_element_type(index.index, index_dtype, False)
            gather_indices.append((i_converted, len(gather_indices_shape)))
            collapsed_slice_dims.append(x_axis)
            gather_slice_shape.append(1)
            start_index_map.append(x_axis)
            x_axis += 1
        elif index.typ is IndexType.NONE:
            slice_shape.append(1)
            newaxis_dims.append(y_axis)
            y_axis += 1
        elif index.typ is IndexType.SLICE:
            size_x = indexer.shape[x_axis]
            start, step, slice_size = _canonicalize_slice(index.index, size_x)
            slice_shape.append(slice_size)
            if step == 1:
                if slice_size != size_x:
                    gather_indices.append((lax._convert_element_type(start, index_dtype, False),
                                           len(gather_indices_shape)))
                    start_index_map.append(x_axis)
                gather_slice_shape.append(slice_size)
                offset_dims.append(collapsed_y_axis)
            else:
                indices = add(array(start, dtype=index_dtype),
                              multiply(array(step, dtype=index_dtype),
                                       lax.iota(index_dtype, slice_size)))
                if step < 0:
                    reversed_y_dims.append(collapsed_y_axis)
                    indices = lax.rev(indices, (0,))
                gather_slice_shape.append(1)
                gather_indices.append((indices, len(gather_indices_shape)))
                start_index_map.append(x_axis)
                gather_indices_shape.append(slice_size)
                collapsed_slice_dims.append(x_axis)
            collapsed_y_axis += 1
            y_axis += 1
            x_axis += 1
        else:
            raise IndexError(f"Got unsupported indexer at position {idx_pos}: {index!r}")

    if len(gather_indices) == 0:
        gather_indices_array = np.zeros((0,), dtype=index_dtype)
    elif len(gather_indices) == 1:
        g, _ = gather_indices[0]
        gather_indices_array = lax.expand_dims(g, (len(lax.shape_of(g)),))
    else:
        last_dim = len(gather_indices_shape)
        gather_indices_shape.append(1)
        gather_indices_array = lax.concatenate([
            lax.broadcast_in_dim(g, tuple(gather_indices_shape),
                                 tuple(range(i, i + len(lax.shape_of(g)))))
            for g, i in gather_indices], last_dim)

    dnums = slicing.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                           collapsed_slice_dims=tuple(sorted(collapsed_slice_dims)),
                                           start_index_map=tuple(start_index_map))
    return _GatherIndexer(slice_shape=slice_shape, gather_slice_shape=gather_slice_shape,
                          gather_indices=gather_indices_array, dnums=dnums,
                          unique_indices=not advanced_indexes,
                          indices_are_sorted=not advanced_indexes,
                          reversed_y_dims=reversed_y_dims, newaxis_dims=tuple(newaxis_dims),
                          scalar_bool_dims=scalar_bool_dims)


def _canonicalize_slice(s: slice, size):
    """JAX's ``core.canonicalize_slice``: (start, step, size) of a static slice, also for a
    symbolic axis size (the signs of start, stop and step must be decided statically)."""
    def index(d):
        try:
            return operator.index(d)
        except TypeError:
            return d

    step = index(s.step) if s.step is not None else 1
    try:
        if step == 0:
            raise ValueError("slice step cannot be zero")
        step_gt_0 = step > 0
    except InconclusiveDimensionOperation as e:
        raise InconclusiveDimensionOperation(
            f"In slice with non-constant elements the step ({step}) must be resolved "
            f"statically if it is > 0 or < 0.\nDetails: {e}") from None

    def clamp(i, which):
        try:
            i_ge_0 = i >= 0
        except InconclusiveDimensionOperation as e:
            raise InconclusiveDimensionOperation(
                f"In slice with non-constant elements the {which} ({i}) must be resolved "
                f"statically if it is >= 0.\nDetails: {e}") from None
        if i_ge_0:
            return min_dim(size, i) if step_gt_0 else min_dim(size - 1, i)
        return max_dim(0, size + i) if step_gt_0 else max_dim(-1, size + i)

    start = (0 if step_gt_0 else size - 1) if s.start is None else clamp(index(s.start), "start")
    stop = (size if step_gt_0 else -1) if s.stop is None else clamp(index(s.stop), "stop")
    gap = step if step_gt_0 else -step
    distance = (stop - start) if step_gt_0 else (start - stop)
    return start, step, max_dim(0, distance + gap - 1) // gap
