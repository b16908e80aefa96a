"""NumPy indexing as ``jax.numpy`` implements it (``jax/_src/numpy/indexing.py``), on the
plans of ``_indexer.py``:

- ``x[idx]`` tries, in order, one static ``slice`` (ints, static slices, ``None``,
  ``...``), one ``dynamic_slice`` (scalar traced integers and unit-step slices) and
  finally one ``gather`` (integer-array advanced indexing, strided slices), binding
  the same equations in the same order as JAX. Out-of-range integers clamp (XLA's
  gather and dynamic_slice semantics); negative integers count from the end.
- ``x.at[idx].set/add/subtract/multiply/divide/power/min/max/get`` scatter (or gather)
  with JAX's semantics: repeated indices accumulate, out-of-bounds updates are dropped
  (mode ``FILL_OR_DROP``, JAX's default for scatters).
- ``take`` and ``take_along_axis`` (default mode ``fill``: out-of-bounds gathers fill).
"""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.shape_poly import int_dtype_for_dim
from traxla.lax import slicing
from traxla.numpy._creation import asarray, ones_like
from traxla.numpy._indexer import (GatherScatterMode, NDIndexer, _DynamicSlice, _StaticSlice,
                                   _dtype_of, _host, _is_traced, _shape)
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import broadcast_shapes, check_arraylike, promote_dtypes
from traxla.numpy._shape import broadcast_to, ravel, squeeze
from traxla.numpy._ufuncs import _where, power, remainder, ufuncs

# -- gather ------------------------------------------------------------------------------------

def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None, normalize_indices=True):
    """``arr[idx]`` (and ``arr.at[idx].get(...)``)."""
    indexer = NDIndexer.from_raw_indices(idx, lax.shape_of(arr))
    for plan, apply in ((indexer.to_static_slice, _static_slice),
                        (indexer.to_dynamic_slice, _dynamic_slice)):
        try:
            ix = plan(normalize_indices=normalize_indices, mode=mode)
        except (TypeError, ValueError, IndexError):  # the index needs the next strategy
            continue
        return apply(arr, ix)
    indexer = indexer.expand_bool_indices()
    return _gather(arr, indexer, indices_are_sorted=indices_are_sorted,
                   unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                   normalize_indices=normalize_indices)


def getitem(arr, idx):
    return rewriting_take(arr, idx)


def _static_slice(arr, ix: _StaticSlice):
    if ix.is_trivial_slice(lax.shape_of(arr)):
        result = arr
    else:
        result = lax.slice(arr, ix.start_indices, ix.limit_indices, ix.strides)
    return _reverse_squeeze_expand(result, ix)


def _dynamic_slice(arr, ix: _DynamicSlice):
    if ix.trivial_slicing:
        result = arr
    else:
        result = lax.dynamic_slice(arr, ix.start_indices, ix.slice_sizes,
                                   allow_negative_indices=ix.normalize_indices)
    return _reverse_squeeze_expand(result, ix)


def _reverse_squeeze_expand(result, ix: _StaticSlice | _DynamicSlice):
    """What follows either slice: negative steps reversed, integer-indexed axes squeezed,
    ``None`` axes inserted."""
    if ix.rev_axes:
        result = lax.rev(result, tuple(ix.rev_axes))
    if ix.squeeze_axes:
        result = lax.squeeze(result, tuple(ix.squeeze_axes))
    if ix.newaxis_dims:
        result = lax.expand_dims(result, tuple(ix.newaxis_dims))
    return lax._lift(result)


def _gather(arr, indexer, *, indices_are_sorted, unique_indices, mode, fill_value,
            normalize_indices):
    ix = indexer.to_gather(normalize_indices=normalize_indices)
    y = arr
    if fill_value is not None:
        if _is_traced(fill_value):
            fill_value._concretization_error(
                "indexed get()", "The fill_value argument to indexed get() must be concrete.")
        if np.ndim(_host(fill_value)) != 0:
            raise ValueError("fill_value argument to indexed get() must be a scalar")
        if isinstance(_host(fill_value), np.ndarray):
            fill_value = _host(fill_value).item()
    if ix.scalar_bool_dims:
        y = lax.expand_dims(y, tuple(ix.scalar_bool_dims))
    if 0 in ix.slice_shape:
        return lax.full_like(y, 0, shape=tuple(ix.slice_shape))
    if 0 not in _shape(ix.gather_indices):
        y = slicing.gather(y, ix.gather_indices, ix.dnums, ix.gather_slice_shape,
                           unique_indices=unique_indices or ix.unique_indices,
                           indices_are_sorted=indices_are_sorted or ix.indices_are_sorted,
                           mode=mode, fill_value=fill_value)
    if ix.reversed_y_dims:
        y = lax.rev(y, tuple(ix.reversed_y_dims))
    return lax._lift(lax.expand_dims(y, tuple(ix.newaxis_dims)))


# -- scatter (x.at[idx].op(y)) -----------------------------------------------------------------

def _scatter_update(x, idx, y, scatter_op, indices_are_sorted, unique_indices, mode=None,
                    normalize_indices=True):
    x = asarray(x)
    if (isinstance(y, int) and not isinstance(y, bool) and dtypes.is_int(lax.dtype_of(x))
            and np.iinfo(lax.dtype_of(x)).min <= y <= np.iinfo(lax.dtype_of(x)).max):
        y = asarray(y, dtype=lax.dtype_of(x))
    else:
        y = asarray(y)
    indexer = NDIndexer.from_raw_indices(idx, lax.shape_of(x)).expand_bool_indices()
    return _scatter_impl(x, y, indexer, scatter_op=scatter_op,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode, normalize_indices=normalize_indices)


def _scatter_impl(x, y, indexer, *, scatter_op, indices_are_sorted, unique_indices, mode,
                  normalize_indices):
    dtype = lax.dtype_of(x)
    weak_type = lax.aval_of(x).weak_type
    ix = indexer.to_gather(normalize_indices=normalize_indices)
    if 0 in ix.slice_shape:
        return x
    x, y = promote_dtypes(x, y)
    try:
        y = broadcast_to(y, tuple(ix.slice_shape))
    except ValueError as e:
        raise ValueError(f"Cannot scatter values of shape {lax.shape_of(y)} into the indexed "
                         f"slice of shape {tuple(ix.slice_shape)} (array of shape "
                         f"{lax.shape_of(x)}): {e}") from None
    y = squeeze(y, axis=ix.newaxis_dims)
    if ix.reversed_y_dims:
        y = lax.rev(y, tuple(ix.reversed_y_dims))
    if ix.scalar_bool_dims:
        x = lax.expand_dims(x, tuple(ix.scalar_bool_dims))
    dn = ix.dnums
    dnums = slicing.ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    out = scatter_op(x, ix.gather_indices, y, dnums,
                     indices_are_sorted=ix.indices_are_sorted or indices_are_sorted,
                     unique_indices=ix.unique_indices or unique_indices, mode=mode)
    if ix.scalar_bool_dims:
        out = lax.squeeze(out, tuple(ix.scalar_bool_dims))
    return lax._lift(lax._convert_element_type(out, dtype, weak_type))


class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx]`` is an ``_IndexUpdateRef`` with JAX's update methods."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: a pure, functional ``x[idx] op= y``."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            wrap_negative_indices=True):
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                              normalize_indices=wrap_negative_indices)

    def _update(self, values, op, indices_are_sorted, unique_indices, mode,
                wrap_negative_indices):
        return _scatter_update(self.array, self.index, values, op,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode,
                               normalize_indices=wrap_negative_indices)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update(values, slicing.scatter, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
        return self._update(values, slicing.scatter_add, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        return self._update(values, slicing.scatter_sub, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 wrap_negative_indices=True):
        return self._update(values, slicing.scatter_mul, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               wrap_negative_indices=True):
        return self._by_scattered_factors(ufuncs["divide"], values, indices_are_sorted,
                                          unique_indices, mode, wrap_negative_indices)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        return self._by_scattered_factors(power, values, indices_are_sorted, unique_indices,
                                          mode, wrap_negative_indices)

    def _by_scattered_factors(self, op, values, indices_are_sorted, unique_indices, mode,
                              wrap_negative_indices):
        """``op(x, f)`` where ``f`` is ones with ``values`` multiplied in at the index (as
        JAX does ``divide`` and ``power``): repeated indices compound."""
        return op(self.array, _scatter_update(
            ones_like(self.array), self.index, values, slicing.scatter_mul,
            indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
            normalize_indices=wrap_negative_indices))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,  # noqa: A003
            wrap_negative_indices=True):
        return self._update(values, slicing.scatter_min, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,  # noqa: A003
            wrap_negative_indices=True):
        return self._update(values, slicing.scatter_max, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices)


# -- take, take_along_axis ---------------------------------------------------------------------

def _ensure_arraylike(name, *args):
    check_arraylike(name, *args)
    return [lax._asarray(a) for a in args]


def _take_impl(a, indices, axis=None, out=None, mode=None, unique_indices=False,
               indices_are_sorted=False, fill_value=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = _ensure_arraylike("take", a, indices)
    if not dtypes.is_int(lax.dtype_of(indices)):
        raise TypeError(f"jnp.take: indices must have an integer type, got "
                        f"{lax.dtype_of(indices)} (indexing an array of shape {lax.shape_of(a)})")
    if axis is None:
        a = ravel(a)
        axis_idx = 0
    else:
        axis_idx = _canonicalize_axis(axis, len(lax.shape_of(a)))
    if mode is None or mode == "fill":
        gather_mode = GatherScatterMode.FILL_OR_DROP
        indices = _where(indices < 0, indices + lax.shape_of(a)[axis_idx], indices)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = remainder(indices, lax._const(indices, lax.shape_of(a)[axis_idx]))
        gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
    elif mode == "clip":
        gather_mode = GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    index_dims = len(lax.shape_of(indices))
    slice_sizes = list(lax.shape_of(a))
    if slice_sizes[axis_idx] == 0:
        if int(np.prod(lax.shape_of(indices))) != 0:
            raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
        return a
    if int(np.prod(lax.shape_of(indices))) == 0:
        out_shape = slice_sizes[:axis_idx] + list(lax.shape_of(indices)) + slice_sizes[axis_idx + 1:]
        return lax.full_like(a, 0, shape=tuple(out_shape))
    slice_sizes[axis_idx] = 1
    ndim = len(lax.shape_of(a))
    dnums = slicing.GatherDimensionNumbers(
        offset_dims=tuple(list(range(axis_idx)) + list(range(axis_idx + index_dims,
                                                             ndim + index_dims - 1))),
        collapsed_slice_dims=(axis_idx,), start_index_map=(axis_idx,))
    return slicing.gather(a, indices[..., None], dimension_numbers=dnums,
                          slice_sizes=tuple(slice_sizes), mode=gather_mode,
                          unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                          fill_value=fill_value)


_take = jit_named(_take_impl, "_take", ("axis", "mode", "unique_indices", "indices_are_sorted",
                                         "fill_value"))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when ``axis`` is None).
    Out-of-bound indices fill (``mode='fill'``, NaN for floats) unless ``mode='clip'``."""
    return _take(a, indices, axis=None if axis is None else operator.index(axis), out=out,
                 mode=mode, unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
                 fill_value=fill_value)


def _normalize_index(index, axis_size):
    if dtypes.is_unsigned_int(_dtype_of(index)):
        return index
    size = lax._const(index, axis_size)
    if isinstance(index, (int, np.integer)):
        return lax.add(index, size) if index < 0 else index
    return lax.select(index < 0, lax.add(index, size), index)


def _take_along_axis_impl(arr, indices, axis=-1, mode=None, fill_value=None, *,
                          wrap_negative_indices=None):
    a, indices = _ensure_arraylike("take_along_axis", arr, indices)
    index_dtype = lax.dtype_of(indices)
    idx_shape = lax.shape_of(indices)
    if not dtypes.is_int(index_dtype):
        raise TypeError(f"take_along_axis indices must be of integer type, got {index_dtype}")
    if axis is None:
        if len(idx_shape) != 1:
            raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                             f"{idx_shape}")
        a = ravel(a)
        axis = 0
    rank = len(lax.shape_of(a))
    if rank != len(idx_shape):
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{len(idx_shape)} vs. {rank} (indices shape {idx_shape}, arr shape "
                         f"{lax.shape_of(a)})")
    axis_int = _canonicalize_axis(axis, rank)

    def replace(tup, val):
        lst = list(tup)
        lst[axis_int] = val
        return tuple(lst)

    axis_size = lax.shape_of(a)[axis_int]
    arr_shape = replace(lax.shape_of(a), 1)
    out_shape = broadcast_shapes(idx_shape, arr_shape)
    if axis_size == 0:
        return lax.full(out_shape, 0, lax.dtype_of(a))
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:
        index_dtype = _int_dtype_for_dim(axis_size)
    indices = lax._convert_element_type(indices, index_dtype, False)
    if wrap_negative_indices:
        indices = _normalize_index(indices, axis_size)
    index_dims = [i for i, idx in enumerate(idx_shape) if i == axis_int or idx != 1]
    gather_index_shape = tuple(np.array(out_shape)[index_dims]) + (1,)
    gather_indices = lax.reshape(indices, tuple(int(d) for d in gather_index_shape))
    slice_sizes, offset_dims, start_index_map, collapsed_slice_dims = [], [], [], []
    operand_batching_dims, start_indices_batching_dims, dims_to_squeeze = [], [], []
    new_i = j = 0
    for i in range(rank):
        if i == axis_int:
            slice_sizes.append(1)
            start_index_map.append(new_i)
            collapsed_slice_dims.append(new_i)
            new_i += 1
            j += 1
        elif idx_shape[i] == 1:
            offset_dims.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            dims_to_squeeze.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            operand_batching_dims.append(new_i)
            start_indices_batching_dims.append(j)
            new_i += 1
            j += 1
    a = lax.squeeze(a, tuple(dims_to_squeeze))
    dnums = slicing.GatherDimensionNumbers(
        offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed_slice_dims),
        start_index_map=tuple(start_index_map),
        operand_batching_dims=tuple(operand_batching_dims),
        start_indices_batching_dims=tuple(start_indices_batching_dims))
    return slicing.gather(a, gather_indices, dnums, tuple(slice_sizes),
                          mode="fill" if mode is None else mode, fill_value=fill_value)


take_along_axis = jit_named(_take_along_axis_impl, "take_along_axis",
                            ("axis", "mode", "fill_value", "wrap_negative_indices"))


# -- helpers of take and take_along_axis -----------------------------------------------------

def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def _int_dtype_for_dim(d):
    return int_dtype_for_dim(d, signed=True)
