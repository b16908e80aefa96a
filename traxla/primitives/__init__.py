"""Functions that bind one primitive each (the binding half of ``jax.lax``): value helpers
and conversions (``values``), elementwise operations (``elementwise``) and shape operations
(``shapes``). They sit below the transformations, so that autodiff and vmap machinery can
bind primitives without importing ``traxla.lax``, which is built on top of them."""

from traxla.primitives.values import (  # noqa: F401
    _const, _convert_element_type, _eager, _is_array, _lift, _scalar_literals, asarray, aval_of,
    bitcast_convert_type, concrete_aval, convert_element_type, convert_element_type_p, dtype_of,
    is_concrete, shape_of, typed)
from traxla.primitives.elementwise import (  # noqa: F401
    RoundingMethod, _binary, _isnan, _unary, _with_accuracy, abs, acos, acosh, add, asin, asinh,
    atan, atan2, atanh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp,
    clz, complex, conj, copy_p_bind, cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2,
    expm1, floor, ge, gt, imag, integer_pow, is_finite, le, lgamma, log, log1p, logistic, lt,
    max, min, mul, ne, neg, nextafter, population_count, pow, real, reciprocal, rem, round,
    rsqrt, select, select_n, shift_left, shift_right_arithmetic, shift_right_logical, sign, sin,
    sinh, sqrt, square, stop_gradient, stop_gradient_raw, sub, tan, tanh)
from traxla.primitives.shapes import (  # noqa: F401
    DimExpr, _broadcast_in_dim_forwarding, _concrete_shape, _delta, _dynamic_index_in_dim,
    _dynamic_indices, _dynamic_update_index_in_dim, _eye, _one, _ones, _stack, _tri, _unstack, _zero,
    _zeros, broadcast, broadcast_in_dim, broadcast_to, broadcast_to_rank, broadcasted_iota,
    concatenate, dynamic_slice, dynamic_slice_in_dim, dynamic_update_slice,
    dynamic_update_slice_in_dim, expand_dims, full, full_like, index_in_dim, iota, pad, reshape,
    rev, slice, slice_in_dim, split, squeeze, transpose, zeros_like_array)
