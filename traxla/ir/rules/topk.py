"""Top-k primitives: ``top_k`` (exact, along any axis) and ``approx_top_k`` (JAX's
``approx_max_k`` / ``approx_min_k``; on CPU JAX lowers it to the exact fallback, and so
does traxla)."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.primitive import Primitive, def_typing


def _top_k_rule(operand, *, k, axis):
    if dtypes.is_complex(operand.dtype):
        raise ValueError("top_k is not compatible with complex inputs.")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if len(operand.shape) == 0:
        raise TypeError(f"top_k operand must have >= 1 dimension, got {operand.shape}")
    if not 0 <= axis < len(operand.shape):
        raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={operand.shape}")
    shape = list(operand.shape)
    if shape[axis] < k:
        raise ValueError("k argument to top_k must be no larger than size along axis;"
                         f" got k={k} with shape={shape} and axis={axis}")
    shape[axis] = k
    return [operand.update(shape=shape),
            operand.update(shape=shape, dtype=np.dtype(np.int32), weak_type=False)]


def _approx_top_k_rule(operand, *, k, reduction_dimension, recall_target, is_max_k,
                       reduction_input_size_override, aggregate_to_topk):
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if len(operand.shape) == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    dims = list(operand.shape)
    if not -len(dims) <= reduction_dimension < len(dims):
        raise ValueError(f"approx_top_k: reduction_dimension {reduction_dimension} out of range "
                         f"for operand shape {operand.shape}")
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim "
                         f"{dims[reduction_dimension]}, got {k}")
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    # JAX's CPU fallback returns exactly k sorted results whether or not it aggregates.
    dims[reduction_dimension] = k
    return [operand.update(shape=dims),
            operand.update(shape=dims, dtype=np.dtype(np.int32), weak_type=False)]


top_k_p = def_typing(Primitive("top_k", multiple_results=True), _top_k_rule)
approx_top_k_p = def_typing(Primitive("approx_top_k", multiple_results=True), _approx_top_k_rule)
P = {"top_k": top_k_p, "approx_top_k": approx_top_k_p}
