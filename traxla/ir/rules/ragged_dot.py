"""``ragged_dot_general``: a ``dot_general`` whose lhs has one ragged dimension cut into
groups by ``group_sizes`` (JAX's primitive behind ``lax.ragged_dot``). Three modes, by the
kind of the lhs ragged dimension: non-contracting (each group of rows meets its own rhs
slice along the rhs group dimension), contracting (one product per group: a leading group
dimension in the result), batch (a plain ``dot_general``)."""
from __future__ import annotations

import dataclasses
import enum

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules.reduction import _dot_general_dtype


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers():
    """Describes ragged, group, and dot dimensions for ragged dot general.

    Args:
      dot_dimension_numbers: ``((lhs_contracting_dims, rhs_contracting_dims),
        (lhs_batch_dims, rhs_batch_dims))``.
      lhs_ragged_dimensions: a sequence of ints indicating the 'lhs' ragged dimensions.
      rhs_group_dimensions: a sequence of ints indicating the 'rhs' group dimensions.
    """
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


class RaggedDotMode(enum.Enum):
    RAGGED_NONCONTRACTING = 1  # [b,m,k], [g,b,k,n], [b,g] -> [b,m,n]
    RAGGED_CONTRACTING = 2     # [b,m,k], [b,k,n],   [b,g] -> [g,b,m,n]
    RAGGED_BATCH = 3           # [b,m,k], [b,k,n],   [g]   -> [b,m,n]


def remaining(original, *removed_lists):
    removed = set()
    for r in removed_lists:
        removed.update(r)
    return [i for i in original if i not in removed]


def ragged_dot_mode_and_dim(lhs_rank: int, dn: RaggedDotDimensionNumbers):
    lhs_ragged_dim = dn.lhs_ragged_dimensions[0]
    (lhs_contracting, _), (lhs_batch, _) = dn.dot_dimension_numbers
    lhs_noncontracting = remaining(range(lhs_rank), lhs_contracting, lhs_batch)
    if lhs_ragged_dim in lhs_noncontracting:
        mode = RaggedDotMode.RAGGED_NONCONTRACTING
    elif lhs_ragged_dim in lhs_contracting:
        mode = RaggedDotMode.RAGGED_CONTRACTING
    elif lhs_ragged_dim in lhs_batch:
        mode = RaggedDotMode.RAGGED_BATCH
    else:
        raise TypeError(f"lhs_ragged_dim {lhs_ragged_dim} not found in lhs_noncontracting "
                        f"{lhs_noncontracting}, lhs_contracting {lhs_contracting}, or "
                        f"lhs_batch {lhs_batch}.")
    return mode, lhs_ragged_dim


def ragged_dot_prefix_dims(mode, rank, ragged_dim, batch, contract):
    """The lhs dimensions ``group_sizes`` of more than one dimension is indexed by."""
    batch, contract = list(batch), list(contract)
    noncontract = remaining(range(rank), contract, batch)
    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        return batch + noncontract[:noncontract.index(ragged_dim)]
    if mode is RaggedDotMode.RAGGED_CONTRACTING:
        return batch + contract[:contract.index(ragged_dim)]
    return batch[:batch.index(ragged_dim)]


def _check_in_range(dim, rank, dim_name, arg_name):
    if dim < 0 or dim >= rank:
        raise TypeError(f"ragged_dot_general requires {dim_name} numbers to be nonnegative and "
                        f"less than the number of axes of the {arg_name} value, got {dim} for "
                        f"{arg_name} of rank {rank}.")


def _ragged_dot_general_rule(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers, precision,
                             preferred_element_type, group_offset, out_sharding):
    dn = ragged_dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    lhs_ragged_dim = dn.lhs_ragged_dimensions[0]
    _check_in_range(lhs_ragged_dim, lhs.ndim, "lhs ragged dimension", "lhs")
    mode, _ = ragged_dot_mode_and_dim(lhs.ndim, dn)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if group_sizes.ndim == 0:
        raise TypeError("expected rank of group_sizes to be >=1.")
    if group_sizes.ndim != 1:
        prefix = ragged_dot_prefix_dims(mode, lhs.ndim, lhs_ragged_dim, lb, lc)
        expected = tuple(lhs.shape[i] for i in prefix) + (group_sizes.shape[-1],)
        if tuple(group_sizes.shape) != expected:
            raise TypeError(f"expected group_sizes to have shape {expected}, got "
                            f"{group_sizes.shape}.")
    num_groups = group_sizes.shape[-1]
    group_dims = dn.rhs_group_dimensions
    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        if len(group_dims) != 1:
            raise TypeError("ragged_dot_general requires exactly one rhs group dimension when "
                            "lhs ragged dimension is noncontracting.")
        _check_in_range(group_dims[0], rhs.ndim, "rhs group dimension", "rhs")
        if group_dims[0] in rb or group_dims[0] in rc:
            raise TypeError("ragged_dot_general requires rhs group dimension numbers to be "
                            "distinct from contracting and batch dimensions.")
        if rhs.shape[group_dims[0]] != num_groups:
            raise TypeError(f"expected rhs group dimension size to be {num_groups}, got "
                            f"{rhs.shape[group_dims[0]]}.")
    elif group_dims:
        raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when lhs "
                        "ragged dimension is contracting or batch.")
    if not dtypes.is_int(group_sizes.dtype):
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of "
                        "np.integer.")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("ragged_dot_general requires equal numbers of lhs and rhs contracting "
                        f"and batch dimensions, got {dn.dot_dimension_numbers}.")
    for (ld, rd, what) in ((lb, rb, "batch"), (lc, rc, "contracting")):
        ls, rs = tuple(lhs.shape[d] for d in ld), tuple(rhs.shape[d] for d in rd)
        if ls != rs:
            raise TypeError(f"ragged_dot_general requires lhs {what} dimensions and rhs {what} "
                            f"dimensions to have the same shape, got {ls} and {rs}.")
    pet = None if preferred_element_type is None else np.dtype(preferred_element_type)
    dtype = _dot_general_dtype(lhs, rhs, pet)
    shape = (tuple(lhs.shape[d] for d in lb)
             + tuple(lhs.shape[d] for d in remaining(range(lhs.ndim), lc, lb))
             + tuple(rhs.shape[d] for d in remaining(range(rhs.ndim), rc, rb, group_dims)))
    if mode is RaggedDotMode.RAGGED_CONTRACTING:
        shape = (num_groups,) + shape
    weak = lhs.weak_type and rhs.weak_type and group_sizes.weak_type
    return ShapedArray(shape, dtype, weak, out_sharding)


ragged_dot_general_p = def_typing(Primitive("ragged_dot_general"), _ragged_dot_general_rule)
P = {"ragged_dot_general": ragged_dot_general_p}
