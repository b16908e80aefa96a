"""Shape primitives: broadcast_in_dim, reshape, squeeze, transpose, rev,
concatenate, pad, slice, dynamic_slice, dynamic_update_slice, iota."""
from __future__ import annotations

import math

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.rules._util import check_same_dtypes
from traxla.ir.shape_poly import DimExpr, max_dim


def _broadcast_in_dim_rule(x, *, shape, broadcast_dimensions, sharding=None):
    if any(d < 0 for d in shape):
        raise TypeError("broadcast_in_dim shape must have every element be nonnegative, got "
                        f"{tuple(shape)}.")
    if any(d < 0 for d in broadcast_dimensions):  # JAX's _check_shapelike
        raise TypeError("broadcast_in_dim broadcast_dimensions must have every element be "
                        f"nonnegative, got {tuple(broadcast_dimensions)}.")
    # JAX's checks, in its order, with its messages (the dimensions need not be increasing)
    if x.ndim != len(broadcast_dimensions):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to operand "
                        f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim "
                        f"{x.ndim}.")
    if len(shape) < x.ndim:
        raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher rank "
                        f"to the operand shape; got operand ndim {x.ndim} and target broadcast "
                        f"ndim {len(shape)}.")
    if not set(broadcast_dimensions).issubset(range(len(shape))):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be a subset of output "
                        f"dimensions, got {broadcast_dimensions} for operand ndim {x.ndim} and "
                        f"shape {shape}.")
    if any(x.shape[i] not in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)):
        raise TypeError("broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                        "their corresponding dimensions in the target broadcast shape; got operand "
                        f"of shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
                        f"{broadcast_dimensions} ")
    if len(broadcast_dimensions) != len(set(broadcast_dimensions)):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must not contain duplicates, got "
                        f"broadcast_dimensions {broadcast_dimensions}")
    return ShapedArray(shape, x.dtype, x.weak_type)


def _reshape_rule(x, *, new_sizes, dimensions, sharding=None):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != math.prod(x.shape):
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                        f"(size {math.prod(new_sizes)}) for shape {x.shape} (size {math.prod(x.shape)}).")
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(f"reshape dimensions must be a permutation of operand dimensions, got "
                        f"dimensions {dimensions} for shape {x.shape}.")
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


def _squeeze_rule(x, *, dimensions):
    dims = tuple(d % x.ndim for d in dimensions) if x.ndim else ()
    if any(x.shape[d] != 1 for d in dims):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                         f"got shape={x.shape} and dimensions={dimensions}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dims), x.dtype, x.weak_type)


def _transpose_rule(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {x.shape}.")
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def _rev_rule(x, *, dimensions):
    # JAX's checks, in its order, and messages
    if any(d < 0 for d in dimensions):
        raise TypeError(f"rev dimensions must have every element be nonnegative, got "
                        f"{dimensions}.")
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if dimensions and not max(dimensions) < x.ndim:
        raise TypeError(f"rev dimensions must all be less than operand ndim, got dimensions "
                        f"{dimensions} for operand ndim {x.ndim}.")
    return x


def _concatenate_rule(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand.")
    first = xs[0]
    shapes = ", ".join(str(x.shape) for x in xs)
    # JAX's order and messages: the shape rule, then the dtype rule
    if any(x.ndim != first.ndim for x in xs):
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{shapes}.")
    if not 0 <= dimension < first.ndim:
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes "
                        f"{shapes}.")
    for x in xs:
        if any(a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension):
            raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                            f"than the one being concatenated: concatenating along dimension "
                            f"{dimension} for shapes {shapes}.")
    check_same_dtypes("concatenate", xs, "jnp.concatenate")
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _pad_rule(x, padding_value, *, padding_config):
    # JAX's checks, in its order (the shape rule, then the dtype rule), classes and messages
    if padding_value.shape:
        raise ValueError(f"padding_value must be a scalar; got "
                         f"np.shape(padding_value)={padding_value.shape}")
    if len(padding_config) != x.ndim:
        raise ValueError(f"length of padding_config must equal the number of axes of operand, got "
                         f"padding_config {padding_config} for operand shape {x.shape}")
    if not all(i >= 0 for _, _, i in padding_config):
        raise ValueError(f"interior padding in padding_config must be nonnegative, got "
                         f"padding_config {padding_config}")
    shape = tuple(lo + hi + (0 if d == 0 else 1 + (i + 1) * (d - 1))
                  for (lo, hi, i), d in zip(padding_config, x.shape))
    # Python ints (the config may hold NumPy integers), symbolic dimensions as they are
    shape = tuple(d if isinstance(d, DimExpr) else int(d) for d in shape)
    if not all(d >= 0 for d in shape):
        raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                         f"{shape}, for padding_config {padding_config} and operand shape "
                         f"{x.shape}")
    if x.dtype != padding_value.dtype:
        raise TypeError(f"pad operand and padding_value must be same dtype: got {x.dtype} and "
                        f"{padding_value.dtype}.")
    return ShapedArray(shape, x.dtype, x.weak_type and padding_value.weak_type)


def _slice_rule(x, *, start_indices, limit_indices, strides):
    # JAX's _slice_shape_rule: its checks, in its order, with its messages
    for what, obj in (("start_indices", start_indices), ("limit_indices", limit_indices)):
        if not all(d >= 0 for d in obj):  # JAX's _check_shapelike
            raise TypeError(f"slice {what} must have every element be nonnegative, got {obj}.")
    if x.ndim != len(start_indices):
        raise TypeError("slice start_indices must have length equal to the number of dimensions "
                        f"of the operand, got indices {start_indices} for operand shape {x.shape}.")
    if len(start_indices) != len(limit_indices):
        raise TypeError("slice limit_indices must have the same length as start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if any(l > d for l, d in zip(limit_indices, x.shape)):
        raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                        f"limit_indices {limit_indices} for operand shape {x.shape}.")
    if any(s < 0 for s in start_indices):
        raise TypeError("slice start_indices must be greater than or equal to zero, got "
                        f"start_indices of {start_indices}.")
    if any(l < s for s, l in zip(start_indices, limit_indices)):
        raise TypeError("slice limit_indices must be greater than or equal to start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if strides is not None and tuple(strides) != (1,) * x.ndim:
        if not all(d >= 0 for d in strides):
            raise TypeError(f"slice strides must have every element be nonnegative, got {strides}.")
        if len(strides) != x.ndim:
            raise TypeError("slice strides must have length equal to the number of dimensions "
                            f"of the operand, got strides {strides} for operand shape {x.shape}.")
        if not all(st > 0 for st in strides):  # (JAX lets 0 through, to a ZeroDivisionError)
            raise TypeError(f"slice strides must be positive, got {strides}")
    strides = strides or (1,) * x.ndim
    shape = tuple(max_dim(0, -((-(l - s)) // st))
                  for s, l, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _check_index_dtypes(name, indices, sep):
    if any(i.dtype != indices[0].dtype or not dtypes.is_int(i.dtype) for i in indices):
        raise TypeError(f"index arguments to {name} must be integers of the same type, got"
                        f"{sep}{', '.join(i.dtype.name for i in indices)}")


def _dynamic_slice_rule(x, *indices, slice_sizes):
    # JAX's checks, in its order (the shape rule, then the dtype rule), with its messages
    if len(indices) != x.ndim:
        raise TypeError(f"dynamic_slice requires one start index per operand dimension: got "
                        f"{len(indices)} indices for operand shape {x.shape}.")
    if len(slice_sizes) != x.ndim or not all(d >= s for d, s in zip(x.shape, slice_sizes)):
        raise TypeError("slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {tuple(slice_sizes)} for operand shape {x.shape}.")
    if not all(s >= 0 for s in slice_sizes):
        raise TypeError("slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes of {tuple(slice_sizes)}.")
    if any(i.ndim != 0 for i in indices):
        raise TypeError("start_indices arguments to dynamic_slice must be scalars, "
                        f" got indices {indices}")
    _check_index_dtypes("dynamic_slice", indices, ": ")
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_update_slice_rule(x, update, *indices):
    if x.ndim != update.ndim:
        raise TypeError("dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {update.shape} for operand shape {x.shape}.")
    if x.ndim != len(indices):
        raise TypeError("dynamic_update_slice start_indices must have length equal to the rank "
                        f"of operand, got indices {indices} for operand shape {x.shape}.")
    if any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError("dynamic_update_slice update shape must be smaller than operand shape, got "
                        f"update shape {update.shape} for operand shape {x.shape}.")
    if any(i.ndim != 0 for i in indices):
        raise TypeError("start_indices arguments to dynamic_update_slice must be "
                        f"scalars, got indices {indices}")
    check_same_dtypes("dynamic_update_slice", (x, update))
    _check_index_dtypes("dynamic_update_slice", indices, " ")
    # weak only when every operand is, the start indices included (JAX's standard rule)
    weak = x.weak_type and update.weak_type and all(i.weak_type for i in indices)
    return x if weak == x.weak_type else ShapedArray(x.shape, x.dtype, weak)


def _iota_rule(*, dtype, shape, dimension, sharding=None):
    # JAX's checks, in its order, and messages (a bool iota failed MLIR verification)
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have every element be nonnegative, got {tuple(shape)}.")
    dt = np.dtype(dtype)
    if not (dtypes.is_int(dt) or dtypes.is_float(dt) or dtypes.is_complex(dt)):
        raise TypeError(f"iota does not accept dtype {dt.name}. Accepted dtypes are subtypes of "
                        f"integer, floating, complexfloating.")
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension must be between 0 and len(shape), got dimension={dimension} "
                         f"for shape={shape}")
    return ShapedArray(shape, np.dtype(dtype), False)


broadcast_in_dim_p = def_typing(Primitive("broadcast_in_dim"), _broadcast_in_dim_rule, memoize=True)
def_printing(broadcast_in_dim_p, hide=("shape", "sharding"), hide_if_empty=("broadcast_dimensions",))
reshape_p = def_typing(Primitive("reshape"), _reshape_rule, memoize=True)
squeeze_p = def_typing(Primitive("squeeze"), _squeeze_rule, memoize=True)
transpose_p = def_typing(Primitive("transpose"), _transpose_rule, memoize=True)
rev_p = def_typing(Primitive("rev"), _rev_rule, memoize=True)
concatenate_p = def_typing(Primitive("concatenate"), _concatenate_rule)
pad_p = def_typing(Primitive("pad"), _pad_rule)
slice_p = def_typing(Primitive("slice"), _slice_rule, memoize=True)
dynamic_slice_p = def_typing(Primitive("dynamic_slice"), _dynamic_slice_rule)
dynamic_update_slice_p = def_typing(Primitive("dynamic_update_slice"), _dynamic_update_slice_rule)
iota_p = def_typing(Primitive("iota"), _iota_rule)


def _empty_rule(*, shape, dtype, out_sharding):
    """``lax.empty``: the shape and dtype as given (an int is a 1-d shape; the dtype is not
    canonicalized, as JAX's ``ShapedArray``), never weakly typed."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dt = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
    return ShapedArray(shape, dt, False, out_sharding)


empty_p = def_typing(Primitive("empty"), _empty_rule)


# -- stack, unstack, split: several arrays <-> one, along an axis ---------------------------------

def _stack_rule(*xs, axis):
    if not xs:
        raise TypeError("stack requires at least one operand.")
    first = xs[0]
    for x in xs[1:]:
        if x.shape != first.shape or x.dtype != first.dtype:
            raise TypeError("stack requires operands of the same shape and dtype, got "
                            f"{', '.join(x.str_short() for x in xs)}.")
    if not 0 <= axis <= first.ndim:
        raise TypeError(f"stack axis {axis} out of range for operands of rank {first.ndim}.")
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    return ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))


def _unstack_rule(x, *, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"unstack axis {axis} out of range for an operand of shape {x.shape}.")
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]


def _split_rule(x, *, sizes, axis):
    if not 0 <= axis < x.ndim:
        raise TypeError(f"split axis {axis} out of range for an operand of shape {x.shape}.")
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise TypeError(f"split sizes {tuple(int(s) for s in sizes)} must be nonnegative and sum to "
                        f"the size {x.shape[axis]} of axis {axis} of {x.str_short()}.")
    outs = []
    for s in sizes:
        shape = list(x.shape)
        shape[axis] = int(s)
        outs.append(ShapedArray(shape, x.dtype, x.weak_type))
    return outs


stack_p = def_typing(Primitive("stack"), _stack_rule)
unstack_p = def_typing(Primitive("unstack", multiple_results=True), _unstack_rule)
split_p = def_typing(Primitive("split", multiple_results=True), _split_rule)
