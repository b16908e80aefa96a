"""``traxla.lax``'s sorting and top-k operations, and the total-order comparators
(NumPy's order: -0.0 == 0.0, NaNs last) that ``sort`` and ``searchsorted`` use."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.elementwise import P as _E
from traxla.ir.rules.indexing import sort_p
from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.primitives.values import dtype_of, shape_of
from traxla.primitives.elementwise import _isnan, bitwise_and, bitwise_or, eq, imag, real, select
from traxla.primitives.shapes import _zero, _zeros, full_like

eq_to_p, lt_to_p, le_to_p = _E["eq_to"], _E["lt_to"], _E["le_to"]


def _canonical_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:  # (a rank-0 operand has no axis to sort, as in JAX)
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``lax.sort``: one array, or a sequence sorted together by its first ``num_keys``."""
    if isinstance(operand, (list, tuple)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dimension = _canonical_axis(dimension, len(shape_of(operand[0])))
        return tuple(sort_p.bind(*operand, dimension=dimension, is_stable=is_stable,
                                 num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = _canonical_axis(dimension, len(shape_of(operand)))
    return sort_p.bind(operand, dimension=dimension, is_stable=is_stable, num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``."""
    dimension = _canonical_axis(dimension, len(shape_of(keys)))
    k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def top_k(operand, k: int, *, axis: int = -1):
    """The ``k`` largest entries along ``axis`` and their int32 indices (``jax.lax.top_k``)."""
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = _canonical_axis(axis, len(shape_of(operand)))  # JAX's canonicalize_axis
    return top_k_p.bind(operand, k=int(k), axis=axis)


def _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, is_max_k):
    return approx_top_k_p.bind(operand, k=k, reduction_dimension=reduction_dimension,
                               recall_target=recall_target, is_max_k=is_max_k,
                               reduction_input_size_override=reduction_input_size_override,
                               aggregate_to_topk=aggregate_to_topk)


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The (approximately) largest ``k`` values and their indices (``jax.lax.approx_max_k``;
    exact on CPU, as JAX's fallback)."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The (approximately) smallest ``k`` values and their indices (``jax.lax.approx_min_k``)."""
    return _approx_k(operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)


population_count_p, clz_p = _E["population_count"], _E["clz"]

def _canonicalize_float_for_sort(x):
    """-0.0 -> 0.0 and every NaN -> NaN, so total-order comparisons order as NumPy's sort."""
    result = select(eq(x, _zero(x)), _zeros(x), x)
    return select(_isnan(x), full_like(result, np.nan), result)


def _operands_to_keys(*operands, num_keys=1):
    x_keys, y_keys = [], []
    for x, y in zip(operands[:2 * num_keys:2], operands[1:2 * num_keys:2]):
        dt = dtype_of(x)
        if dtypes.is_complex(dt):
            x_keys += [_canonicalize_float_for_sort(real(x)), _canonicalize_float_for_sort(imag(x))]
            y_keys += [_canonicalize_float_for_sort(real(y)), _canonicalize_float_for_sort(imag(y))]
        elif dtypes.is_float(dt):
            x_keys.append(_canonicalize_float_for_sort(x))
            y_keys.append(_canonicalize_float_for_sort(y))
        else:
            x_keys.append(x)
            y_keys.append(y)
    return x_keys, y_keys


def _sort_comparator(last_op, *operands, num_keys=1):
    x_keys, y_keys = _operands_to_keys(*operands, num_keys=num_keys)
    p = None
    for xk, yk in zip(x_keys[::-1], y_keys[::-1]):
        p = (bitwise_or(lt_to_p.bind(xk, yk), bitwise_and(eq_to_p.bind(xk, yk), p))
             if p is not None else last_op.bind(xk, yk))
    return p


def _sort_lt_comparator(*operands, num_keys=1):
    """NumPy's sort order ``x < y`` over (key) operand pairs, as JAX's sort comparator."""
    return _sort_comparator(lt_to_p, *operands, num_keys=num_keys)


def _sort_le_comparator(*operands, num_keys=1):
    """``x <= y`` in the same order (searchsorted's comparator)."""
    return _sort_comparator(le_to_p, *operands, num_keys=num_keys)
