"""``traxla.lax``: thin typed wrappers that bind primitives (no type promotion),
as ``jax.lax``."""
from __future__ import annotations

import builtins
import typing as _typing
from typing import Sequence

from traxla.ir import dtypes
from traxla.ir.rules.call import jit_p  # noqa: F401
from traxla.ir.rules.elementwise import P as _E
from traxla.ir.rules.reduction import P as _R, check_f16_reduction
from traxla.ir.rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,  # noqa: F401
                              dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                              squeeze_p, transpose_p)
from traxla.primitives.values import (_const, _convert_element_type, _eager, _is_array, _lift,  # noqa: F401
                    _scalar_literals, asarray, aval_of, bitcast_convert_type, concrete_aval,
                    convert_element_type, convert_element_type_p, dtype_of, is_concrete, shape_of)

_asarray = asarray  # traxla's own: a folded constant stays a Literal inside the tracer layer


def asarray(x):
    """``lax.asarray``: arrays pass; Python numbers become weakly typed arrays, bools and
    NumPy values strongly typed ones (never a Literal, traxla's IR constant)."""
    return _lift(_asarray(x))
from traxla.primitives.elementwise import (  # noqa: F401
    RoundingMethod, _binary, _isnan, _unary, _with_accuracy, abs, acos, acosh, add, asin, asinh,
    atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz,
    complex, conj, copy_p_bind, cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2, expm1,
    floor, ge, gt, imag, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt, max, min,
    mul, ne, neg, nextafter, population_count, pow, real, reciprocal, rem, round, rsqrt, select,
    select_n, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt,
    square, stop_gradient, stop_gradient_raw, sub, tan, tanh)
from traxla.primitives.shapes import (DimExpr, _broadcast_in_dim_forwarding, _concrete_shape,  # noqa: F401
                      _delta, _dynamic_index_in_dim, _dynamic_indices,
                      _dynamic_update_index_in_dim, _one, _ones, _stack, _tri, _unstack, _zero,
                      _zeros, broadcast, broadcast_in_dim, broadcast_to, broadcast_to_rank,
                      broadcasted_iota, concatenate, dynamic_slice,
                      dynamic_slice_in_dim, dynamic_update_slice,
                      dynamic_update_slice_in_dim, expand_dims, full, full_like, index_in_dim,
                      iota, pad, reshape, rev, slice, slice_in_dim, split, squeeze, transpose,
                      zeros_like_array)

from traxla.api import jit as _jit  # noqa: E402
from traxla.lax.precision import canonicalize_precision
from traxla.ir.sharding import ShardingType
from traxla.sharding import type_sharding

# JAX stages these two out as an inner ``jit`` (static: axis, keepdims, allow_negative_indices).
_dynamic_index_in_dim.__name__ = "dynamic_index_in_dim"
dynamic_index_in_dim = _jit(_dynamic_index_in_dim, static_argnums=(2, 3),
                            static_argnames=("axis", "keepdims", "allow_negative_indices"))
_dynamic_update_index_in_dim.__name__ = "dynamic_update_index_in_dim"
dynamic_update_index_in_dim = _jit(_dynamic_update_index_in_dim, static_argnums=(3,),
                                   static_argnames=("axis", "allow_negative_indices"))

add_p, sub_p, mul_p, div_p = _E["add"], _E["sub"], _E["mul"], _E["div"]
reduce_sum_p = _R["reduce_sum"]
dot_general_p = _R["dot_general"]


# -- contractions and reductions -------------------------------------------------

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(d) for d in lc), tuple(int(d) for d in rc)),
          (tuple(int(d) for d in lb), tuple(int(d) for d in rb)))
    pet = None if preferred_element_type is None else dtypes.to_dtype(preferred_element_type)
    if out_sharding is not None:
        out_ndim = len(shape_of(lhs)) + len(shape_of(rhs)) - 2 * len(lc) - len(lb)
        out_sharding = _type_sharding(out_sharding, out_ndim)
    precision = canonicalize_precision(precision)  # None: default_matmul_precision's
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=pet, out_sharding=out_sharding)


def _type_sharding(sharding_or_spec, ndim):
    """An ``out_sharding`` argument (a NamedSharding, or a P resolved against the mesh of
    ``traxla.sharding.set_mesh``) as the sharding type of a result."""
    if isinstance(sharding_or_spec, ShardingType):
        return sharding_or_spec
    return type_sharding(sharding_or_spec, ndim)


_DOT_DIMENSIONS = ((((0,), (0,)), ((), ())), (((1,), (0,)), ((), ())))  # by lhs rank - 1


def dot(lhs, rhs, precision=None, preferred_element_type=None, *, dimension_numbers=None,
        out_sharding=None):
    if dimension_numbers is not None or out_sharding is not None:
        if dimension_numbers is None:
            ls, rs = shape_of(lhs), shape_of(rhs)
            if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
                raise ValueError(
                    "jax.lax.dot: dimension_numbers must be specified when not performing "
                    "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                    f"products; got lhs_shape={ls} rhs_shape={rs}")
            dimension_numbers = _DOT_DIMENSIONS[len(ls) - 1]
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                           out_sharding=out_sharding)
    ls, rs = shape_of(lhs), shape_of(rhs)
    if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
        raise ValueError("jax.lax.dot: dimension_numbers must be specified when not performing "
                         "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                         f"products; got lhs_shape={ls} rhs_shape={rs}")
    precision = canonicalize_precision(precision)  # None: default_matmul_precision's
    if preferred_element_type is not None:
        preferred_element_type = dtypes.to_dtype(preferred_element_type)
    # (dot_general without its argument canonicalization: these dimensions are canonical)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=_DOT_DIMENSIONS[len(ls) - 1],
                              precision=precision, preferred_element_type=preferred_element_type,
                              out_sharding=None)


def reduce_sum(operand, axes):
    check_f16_reduction(aval_of(operand), tuple(axes))  # (also eagerly: cached programs skip typing)
    return reduce_sum_p.bind(operand, axes=tuple(axes), out_sharding=None)


def _reducer(name):
    prim = _R[name]

    def op(operand, axes):
        return prim.bind(operand, axes=tuple(axes))
    op.__name__ = name
    return op


reduce_max, reduce_min, reduce_prod = _reducer("reduce_max"), _reducer("reduce_min"), _reducer("reduce_prod")
reduce_and, reduce_or = _reducer("reduce_and"), _reducer("reduce_or")


def argmax(operand, axis: int, index_dtype):
    return _R["argmax"].bind(operand, axes=(int(axis),), index_dtype=dtypes.to_dtype(index_dtype))


def argmin(operand, axis: int, index_dtype):
    return _R["argmin"].bind(operand, axes=(int(axis),), index_dtype=dtypes.to_dtype(index_dtype))


def sort_dims(dims: Sequence[int]):
    return tuple(sorted(dims))


from traxla.lax.control_flow import cond, fori_loop, scan, switch, while_loop  # noqa: E402,F401
from traxla.lax.parallel import (all_gather, axis_index, pmax, pmean, pmin, ppermute, psum,  # noqa: E402,F401
                       psum_scatter)


# -- numpy/lax breadth (issue #3): gather/scatter, sort, cumulative reductions, special
#    functions, complex numbers, tile ----------------------------------------------------------

from traxla.lax.slicing import (GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers,  # noqa: E402,F401
                      gather, index_take, scatter, scatter_add, scatter_apply, scatter_max,
                      scatter_min, scatter_mul, scatter_sub)
from traxla.ir.rules import special as _special  # noqa: E402
from traxla.ir.rules.indexing import P as _IDX, sort_p  # noqa: E402,F401


def _cumulative(name):
    prim = _IDX[name]

    def op(operand, axis=0, reverse=False):
        return prim.bind(operand, axis=int(axis), reverse=builtins.bool(reverse))
    op.__name__ = name
    return op


cumsum, cumprod, cummax, cummin, cumlogsumexp = (
    _cumulative(n) for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))


def tile(operand, reps):
    return _special.tile_p.bind(operand, reps=tuple(int(r) for r in reps))


from traxla.lax._sorting import (_canonical_axis, _canonicalize_float_for_sort,  # noqa: E402,F401
                       _operands_to_keys, _sort_comparator, _sort_le_comparator,
                       _sort_lt_comparator, _approx_k, approx_max_k, approx_min_k,
                       approx_top_k_p, eq_to_p, le_to_p, lt_to_p, sort, sort_key_val, top_k,
                       top_k_p)
from traxla.lax.convolution import (ConvDimensionNumbers, ConvGeneralDilatedDimensionNumbers,  # noqa: E402,F401
                          PaddingType, Precision, conv, conv_dimension_numbers,
                          conv_general_dilated, conv_general_dilated_patches,
                          conv_general_permutations, conv_general_shape_tuple, conv_transpose,
                          conv_transpose_shape_tuple, conv_with_general_padding,
                          padtype_to_pads, _conv_shape_tuple as conv_shape_tuple,
                          conv_general_dilated_local, conv_general_dilated_p)
from traxla.lax.windowed import select_and_scatter_p  # noqa: E402,F401
from traxla.lax.windowed import (reduce_p, reduce_window_p, reduce_window_max_p,  # noqa: E402,F401
                       reduce_window_min_p, reduce_window_sum_p, select_and_gather_add_p,
                       select_and_scatter_add_p)
from traxla.lax.fft import fft_p  # noqa: E402,F401
from traxla.lax.windowed import (reduce, reduce_window, reduce_window_max, reduce_window_min,  # noqa: E402,F401
                       reduce_window_shape_tuple, reduce_window_sum)
from traxla.lax.fft import FftType, fft  # noqa: E402,F401
from traxla.lax import linalg  # noqa: E402,F401  (lax.linalg: LAPACK-backed primitives)
population_count_p, clz_p = _E["population_count"], _E["clz"]
# Special functions (igamma, betainc, polygamma, zeta, Bessel I0e/I1e, random_gamma_grad).
from traxla.lax.special import (bessel_i0e, bessel_i1e, betainc, igamma, igamma_grad_a,  # noqa: E402,F401
                      igammac, polygamma, random_gamma_grad, zeta)
# -- issue #12: the rest of lax's operations and control flow ----------------------------------
from traxla.lax.precision import DotAlgorithm, DotAlgorithmPreset, reduce_precision  # noqa: E402,F401
from traxla.lax.composite import composite  # noqa: E402,F401
from traxla.lax.integer_ops import mulhi, reduce_xor  # noqa: E402,F401
from traxla.lax.optimization_barrier import optimization_barrier  # noqa: E402,F401
from traxla.lax.rng import rng_bit_generator, rng_uniform  # noqa: E402,F401
from traxla.lax.stacking import broadcast_shapes  # noqa: E402,F401
from traxla.ir.rules.rng import RandomAlgorithm  # noqa: E402,F401
from traxla.lax.control_flow_composites import associative_scan, map, platform_dependent  # noqa: E402,F401,A004
from traxla.lax.parallel import all_to_all, axis_size, pbroadcast, pcast, pshuffle, pswapaxes  # noqa: E402,F401
from traxla.lax.parallel import ragged_all_to_all, ragged_all_to_all_p  # noqa: E402,F401
from traxla.lax.parallel import precv, psend  # noqa: E402,F401
from traxla.lax.parallel import (all_gather_p, all_to_all_p, axis_index_p, pmax_p, pmin_p,  # noqa: E402,F401
                                 ppermute_p, psum_p)  # the collectives' primitives, as jax.lax names them
from traxla.lax.sharding_constraint import with_sharding_constraint  # noqa: E402,F401
from traxla.lax.precision import Precision  # noqa: E402,F401
from traxla.lax.stacking import stack, unstack  # noqa: E402,F401
# JAX exports its primitives as ``lax.<name>_p`` (custom interpreters key rules on them):
# every elementwise and reduction primitive, under the name it prints with.
for _prim_name, _prim in {**_E, **_R}.items():
    globals().setdefault(f"{_prim_name}_p", _prim)
del _prim_name, _prim
from traxla.lax.solves import custom_linear_solve, custom_root  # noqa: E402,F401

# The primitives JAX's lax exports by name (``lax.psum_p``, ``lax.scan_p``, ...): the
# objects traxla's jaxprs hold, for code that matches on ``eqn.primitive`` or binds them.
from traxla.ir.rules.all_to_all import all_to_all_p  # noqa: E402,F401
from traxla.ir.rules.collectives import (all_gather_p, axis_index_p, pmax_p, pmin_p,  # noqa: E402,F401
                                         ppermute_p, psum_p)
from traxla.ir.rules.control_flow import cond_p, scan_p, while_p  # noqa: E402,F401
from traxla.ir.rules.device_put import device_put_p  # noqa: E402,F401
from traxla.ir.rules.indexing import gather_p  # noqa: E402,F401
from traxla.ir.rules.integer_ops import mulhi_p, reduce_xor_p  # noqa: E402,F401
from traxla.ir.rules.linalg import custom_linear_solve_p as linear_solve_p  # noqa: E402,F401
from traxla.ir.rules.optimization import optimization_barrier_p, reduce_precision_p  # noqa: E402,F401
from traxla.ir.rules.rng import rng_bit_generator_p, rng_uniform_p  # noqa: E402,F401
from traxla.ir.rules.shape import split_p, stack_p, unstack_p  # noqa: E402,F401
from traxla.ir.rules.sharding_constraint import sharding_constraint_p  # noqa: E402,F401
from traxla.ir.rules.special import (igamma_grad_a_p, igamma_p, igammac_p, polygamma_p,  # noqa: E402,F401
                                     regularized_incomplete_beta_p, scatter_sub_p, tile_p,
                                     zeta_p)
cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p = (
    _IDX[n] for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"))
scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p = (
    _IDX[n] for n in ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max"))


# Type aliases of JAX's lax signatures.
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
PrecisionLike = _typing.Union[None, str, Precision, tuple[str, str],
                             tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset]


def batch_matmul(lhs, rhs, precision=None):
    """Batch matrix multiplication."""
    if builtins.min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision=precision)


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """Collapses dimensions ``[start_dimension, stop_dimension)`` of ``operand`` into one
    (major-to-minor)."""
    shape = tuple(operand.shape)
    lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    size = 1
    for d in shape[lo:hi]:
        size *= d
    return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def broadcast_like(arr, like_arr):
    """Broadcasts ``arr`` to the shape of ``like_arr``."""
    return broadcast_to(arr, tuple(like_arr.shape))
from traxla.ir.accuracy import AccuracyMode, Tolerance  # noqa: E402,F401
# -- issue #31: the rest of JAX's lax.py names ---------------------------------------------------
from traxla.lax.misc_ops import (after_all, after_all_p, create_token, create_token_p,  # noqa: E402,F401
                                 dce_sink, dce_sink_p, dtype, empty, empty_p, shape_as_value,
                                 stage, stage_p)
from traxla.lax.ragged_dot import (RaggedDotDimensionNumbers, ragged_dot,  # noqa: E402,F401
                                   ragged_dot_general)
from traxla.lax.scaled_dot import scaled_dot, scaled_dot_p  # noqa: E402,F401
