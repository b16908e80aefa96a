"""``scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` (``lax.dot_general`` dimension
numbers) in ``preferred_element_type``; each scale has its operand's rank and sizes, but
for the contracting dims, which it divides (by at least 2: the subchannel size). The typing
rule checks the operands with JAX's messages."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.dtypes import bfloat16
from traxla.ir.primitive import Primitive, def_typing

scaled_dot_p = Primitive("scaled_dot")


def _check_scale(side, operand, scale, contracting):
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i] != 0:
                raise TypeError(f"{side} contracting dim {i} of size {size} must be divisible "
                                f"by its scale's dim size {scale.shape[i]}.")
            s = size // scale.shape[i]
            if s < 2:
                raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's dim "
                                f"size ({s}) must be at least 2.")
        elif scale.shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size "
                            f"{scale.shape[i]}.")


def check_operands(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers):
    """JAX's checks of scaled_dot's operands (avals; a scale may be None)."""
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    ranks = [len(lhs.shape), len(rhs.shape)] + [len(s.shape) for s in (lhs_scale, rhs_scale)
                                               if s is not None]
    if max(ranks) != min(ranks):
        rank = lambda s: len(s.shape) if s is not None else "N/A"  # noqa: E731
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: "
                        f"{len(lhs.shape)} rhs rank: {len(rhs.shape)} lhs_scale rank: "
                        f"{rank(lhs_scale)} rhs_scale rank: {rank(rhs_scale)}.")
    if len(lhs_batch) != len(rhs_batch):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lhs_batch)} and {len(rhs_batch)}.")
    if len(lhs_contracting) != len(rhs_contracting):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, got "
                        f"{len(lhs_contracting)} and {len(rhs_contracting)}.")
    for i, j in zip(lhs_batch, rhs_batch):
        sizes = [lhs.shape[i], rhs.shape[j]]
        sizes += [lhs_scale.shape[i]] if lhs_scale is not None else []
        sizes += [rhs_scale.shape[j]] if rhs_scale is not None else []
        if max(sizes) != min(sizes):
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lhs_contracting, rhs_contracting):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    if lhs_scale is not None:
        _check_scale("LHS", lhs, lhs_scale, lhs_contracting)
    if rhs_scale is not None:
        _check_scale("RHS", rhs, rhs_scale, rhs_contracting)


def _scaled_dot_rule(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                     preferred_element_type):
    check_operands(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers)
    (lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_kept = [i for i in range(len(lhs.shape)) if i not in lhs_contracting + lhs_batch]
    rhs_kept = [i for i in range(len(rhs.shape)) if i not in rhs_contracting + rhs_batch]
    shape = tuple([lhs.shape[i] for i in lhs_batch] + [lhs.shape[i] for i in lhs_kept]
                  + [rhs.shape[i] for i in rhs_kept])
    dtype = preferred_element_type if preferred_element_type is not None else bfloat16
    return ShapedArray(shape, dtype)


def_typing(scaled_dot_p, _scaled_dot_rule)
