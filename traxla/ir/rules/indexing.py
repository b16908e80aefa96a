"""Indexing and ordering primitives: gather, the scatter family, sort and the
cumulative reductions. Dimension numbers and modes are value types whose repr
is what JAX prints in jaxprs."""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import Jaxpr
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import ANY, NUM, ORDERED, check_dtype


class GatherDimensionNumbers(NamedTuple):
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """What out-of-bounds indices do: CLIP clamps, FILL_OR_DROP fills gathers and drops
    scatters, PROMISE_IN_BOUNDS is XLA's native behaviour (gathers clamp, scatters drop)."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


def _check_indices(name, indices):
    if not dtypes.is_int(indices.dtype):
        raise TypeError(f"{name} indices must be an integer type, got {indices.dtype}")
    if indices.ndim < 1:
        raise TypeError(f"{name} indices must have at least one dimension (the index vector), "
                        f"got shape {indices.shape}")


def _gather_rule(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                 unique_indices, mode, fill_value):
    dn = dimension_numbers
    _check_indices("gather", indices)
    if indices.shape[-1] != len(dn.start_index_map):
        raise TypeError(f"gather: the index vector dimension of indices (shape {indices.shape}) "
                        f"must have size len(start_index_map)={len(dn.start_index_map)}")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"gather slice_sizes {slice_sizes} must have one entry per operand "
                        f"dimension (operand shape {operand.shape})")
    for d, s in enumerate(slice_sizes):
        # (as JAX: no bound when there are no indices, e.g. the JVP of sorting an empty array)
        if 0 not in indices.shape and not 0 <= s <= operand.shape[d]:
            raise TypeError(f"Slice size at index {d} in gather op is out of range, must be "
                            f"within [0, {operand.shape[d]} + 1), got {s}.")
    for i, d in enumerate(dn.collapsed_slice_dims):  # JAX's _gather_shape_rule messages
        if slice_sizes[d] != 1:
            raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound "
                            f"is {slice_sizes[d]} for index {d} at position {i}.")
    for i, d in enumerate(dn.operand_batching_dims):
        # a batching dimension's bound is 0 when the batch is empty (vmap over 0 elements)
        if slice_sizes[d] > 1:
            raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, "
                            f"but bound is {slice_sizes[d]} for index {d} at position {i}.")
    removed = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in removed]
    if len(offset_sizes) != len(dn.offset_dims):
        raise TypeError(f"gather: offset_dims {dn.offset_dims} must have one entry per "
                        f"non-collapsed slice dimension ({len(offset_sizes)})")
    batch = list(indices.shape[:-1])
    rank = len(batch) + len(offset_sizes)
    shape, bi, oi = [], iter(batch), iter(offset_sizes)
    for pos in range(rank):
        shape.append(next(oi) if pos in dn.offset_dims else next(bi))
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _scatter_rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
    _check_indices("scatter", indices)
    if updates.dtype != operand.dtype:
        raise TypeError(f"scatter requires updates of the operand's dtype, got {updates.dtype} "
                        f"for an operand of {operand.dtype}")
    dn = dimension_numbers
    if indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
        raise TypeError(f"scatter: the index vector dimension of indices (shape {indices.shape}) "
                        "must have size len(scatter_dims_to_operand_dims)="
                        f"{len(dn.scatter_dims_to_operand_dims)}")
    expected_rank = len(indices.shape) - 1 + len(dn.update_window_dims)
    if updates.ndim != expected_rank:
        raise TypeError(f"scatter updates must have rank {expected_rank} (index batch dims plus "
                        f"update window dims), got shape {updates.shape}")
    return operand


def _sort_rule(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    if any(o.shape != shape for o in operands[1:]):  # JAX's _sort_abstract_eval message
        shapes = " ".join(str(o.shape) for o in operands)
        raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
    if not 0 <= dimension < max(len(shape), 1):
        raise TypeError(f"sort dimension {dimension} out of range for shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise TypeError(f"sort num_keys={num_keys} must be between 1 and the number of operands")
    return list(operands)


def _cumulative_rule(name, categories):
    def rule(x, *, axis, reverse):
        # JAX's order (shape rule, then dtype rule) and messages
        if axis < 0:
            raise ValueError("XLA operations do not allow negative axes")
        if axis >= x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
        check_dtype(name, categories, x.dtype)
        return x
    return rule


gather_p = def_typing(Primitive("gather"), _gather_rule)
SCATTERS = ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max")
P = {name: def_typing(Primitive(name), _scatter_rule) for name in SCATTERS}
P["gather"] = gather_p
sort_p = P["sort"] = def_typing(Primitive("sort", multiple_results=True), _sort_rule)
CUMULATIVE = {"cumsum": NUM, "cumprod": NUM, "cummax": ORDERED, "cummin": ORDERED,
              "cumlogsumexp": ("floating",)}
for _name, _cats in CUMULATIVE.items():
    P[_name] = def_typing(Primitive(_name), _cumulative_rule(_name, _cats))
del ANY, np, Jaxpr
