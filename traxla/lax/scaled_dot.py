"""``lax.scaled_dot``: a dot product of block-scaled operands (JAX 0.10's): the
``scaled_dot`` primitive, lowered as JAX lowers it, to a ``stablehlo.composite
"xla.scaled_dot"`` whose decomposition (which XLA may replace) broadcasts each scale over
its subchannels, multiplies in bfloat16 and contracts with ``dot_general``."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.scaled_dot import scaled_dot_p
from traxla.lax import broadcast_in_dim, convert_element_type, dot_general, mul, reshape
from traxla.lax.composite import composite
from traxla.lowering.decompose import register_decomposition
from traxla.primitives.values import shape_of
from traxla.tracer.staging import trace_to_jaxpr

__all__ = ["scaled_dot", "scaled_dot_p"]


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` in ``preferred_element_type`` (bfloat16 by
    default), ``@`` being ``lax.dot_general`` with ``dimension_numbers`` (default: the last
    dim of ``lhs`` against the one before the last of ``rhs``, leading dims batched). A
    scale has its operand's shape but along the contracting dims, which it divides by at
    least 2 (the subchannel size); a missing scale is all ones. Not differentiable."""
    if dimension_numbers is None:
        n = len(shape_of(lhs))
        if n in (0, 1):
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    dimension_numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if lhs_scale is None:
        lhs_scale = _dummy_scale(lhs, dimension_numbers[0][0])
    if rhs_scale is None:
        rhs_scale = _dummy_scale(rhs, dimension_numbers[0][1])
    element_type = dtypes.check_user_dtype(
        preferred_element_type if preferred_element_type is not None else dtypes.bfloat16,
        "scaled_dot")
    return scaled_dot_p.bind(lhs, rhs, lhs_scale, rhs_scale,
                             dimension_numbers=dimension_numbers,
                             preferred_element_type=element_type)


def _dummy_scale(operand, contracting):
    shape = [1 if d in contracting else s for d, s in enumerate(shape_of(operand))]
    ones = broadcast_in_dim(np.array(1.0, dtypes.bfloat16), tuple(shape), ())
    return convert_element_type(ones, np.dtype(ml_dtypes.float8_e8m0fnu))


def _scale_broadcast(scale, operand_shape, contracting):
    """``scale`` repeated over each contracting dim's subchannels, to the operand's shape."""
    for i in contracting:
        shape = list(shape_of(scale))
        if shape[i] != operand_shape[i]:
            times = operand_shape[i] // shape[i]
            expanded = shape[:i + 1] + [1] + shape[i + 1:]
            scale = broadcast_in_dim(scale, tuple(expanded),  # expand_dims(scale, i + 1)
                                     tuple(d for d in range(len(expanded)) if d != i + 1))
            scale = broadcast_in_dim(scale, tuple(shape[:i + 1] + [times] + shape[i + 1:]),
                                     tuple(range(len(expanded))))
            scale = reshape(scale, tuple(shape[:i] + [shape[i] * times] + shape[i + 1:]))
    return scale


def _scaled(operand, scale, contracting):
    scale = _scale_broadcast(scale, shape_of(operand), contracting)
    return mul(convert_element_type(operand, dtypes.bfloat16),
               convert_element_type(scale, dtypes.bfloat16))


def _scaled_dot_impl(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers,
                     preferred_element_type=None):
    (lc, rc), _ = dimension_numbers
    return dot_general(_scaled(lhs, lhs_scale, lc), _scaled(rhs, rhs_scale, rc),
                       dimension_numbers=dimension_numbers,
                       preferred_element_type=preferred_element_type)


_as_composite = composite(_scaled_dot_impl, name="xla.scaled_dot")


def _build(avals_in, params):
    return trace_to_jaxpr(lambda *args: [_as_composite(*args, **params)], list(avals_in))


register_decomposition(scaled_dot_p, _build)
