"""``conv_general_dilated``: the primitive, its dimension numbers and its typing rule
(JAX's lax/convolution.py)."""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import ANY, check_dtype, check_same_dtypes
from traxla.ir.shape_poly import is_symbolic, max_dim


class ConvDimensionNumbers(NamedTuple):
    """Batch, feature and spatial dimensions of a convolution's operands and output.

    lhs_spec: (batch dimension, feature dimension, spatial dimensions...)
    rhs_spec: (out feature dimension, in feature dimension, spatial dimensions...)
    out_spec: (batch dimension, feature dimension, spatial dimensions...)
    """
    lhs_spec: Sequence[int]
    rhs_spec: Sequence[int]
    out_spec: Sequence[int]


def dilate_shape(shape, dilation):
    """The size of each dimension after inserting ``dilation - 1`` holes between elements."""
    return tuple(0 if d == 0 else 1 + r * (d - 1) for d, r in zip(shape, dilation))


def stride_dim(size, window, stride):
    """Output positions of a window of ``window`` sliding by ``stride`` over ``size``."""
    return max_dim(0, (size - window) // stride + 1)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The (batch, feature, spatial...) output shape of a convolution in canonical layout."""
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError("Wrong number of explicit pads for convolution: expected "
                        f"{len(lhs_shape) - 2}, got {len(pads)}.")
    lhs_padded = [d + sum(_dim(p) for p in pad) for d, pad in zip(lhs_shape[2:], pads)]
    if any(d < 0 for d in lhs_padded):
        raise ValueError("Negative padding is larger than the size of the corresponding "
                         f"dimension: got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}")
    out_space = tuple(stride_dim(_dim(s), _dim(w), int(st))
                      for s, w, st in zip(lhs_padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (_dim(batch), _dim(rhs_shape[0])) + out_space


def _dim(d):
    return d if is_symbolic(d) else int(d)


def _conv_rule(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None, out_sharding=None):
    dn = dimension_numbers
    if type(dn) is not ConvDimensionNumbers:
        raise TypeError("conv_general_dilated expects ConvDimensionNumbers as its "
                        f"dimension_numbers param, got {dn!r}")
    if len(lhs.shape) != len(rhs.shape):
        raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                         f"dimensions, but got {lhs.shape} and {rhs.shape}.")
    if not feature_group_count > 0:
        raise ValueError("conv_general_dilated feature_group_count must be a positive "
                         f"integer, got {feature_group_count}.")
    lhs_features = lhs.shape[dn.lhs_spec[1]]
    quot, rem = divmod(lhs_features, feature_group_count)
    if rem:
        raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                         f"dimension size, but {feature_group_count} does not divide "
                         f"{lhs_features}.")
    if quot != rhs.shape[dn.rhs_spec[1]]:
        raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                         "feature_group_count must equal the rhs input feature dimension "
                         f"size, but {lhs_features} // {feature_group_count} != "
                         f"{rhs.shape[dn.rhs_spec[1]]}.")
    if rhs.shape[dn.rhs_spec[0]] % feature_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of feature_group_count, but {rhs.shape[dn.rhs_spec[0]]} "
                         f"is not a multiple of {feature_group_count}.")
    if not batch_group_count > 0:
        raise ValueError("conv_general_dilated batch_group_count must be a positive "
                         f"integer, got {batch_group_count}.")
    lhs_batch = lhs.shape[dn.lhs_spec[0]]
    if batch_group_count > 1 and lhs_batch % batch_group_count != 0:
        raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                         f"dimension size, but {batch_group_count} does not divide {lhs_batch}.")
    if rhs.shape[dn.rhs_spec[0]] % batch_group_count:
        raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                         f"multiple of batch_group_count, but {rhs.shape[dn.rhs_spec[0]]} is "
                         f"not a multiple of {batch_group_count}.")
    if batch_group_count > 1 and feature_group_count > 1:
        raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                         f"got batch_group_count={batch_group_count} and "
                         f"feature_group_count={feature_group_count}")
    if len(dn.rhs_spec) - 2 != len(window_strides):
        raise ValueError("conv_general_dilated window and window_strides must have the same "
                         f"number of dimensions, but got {len(dn.rhs_spec) - 2} and "
                         f"{len(window_strides)}")
    for name, vals in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                       ("rhs_dilation", rhs_dilation)):
        if len(vals) != len(dn.rhs_spec) - 2 or any(v < 1 for v in vals):
            raise ValueError(f"conv_general_dilated {name} must be {len(dn.rhs_spec) - 2} "
                             f"positive integers, got {tuple(vals)}.")
    check_same_dtypes("conv_general_dilated", (lhs, rhs))
    check_dtype("conv_general_dilated", ANY, lhs.dtype)
    lhs_trans = dilate_shape([lhs.shape[i] for i in dn.lhs_spec], (1, 1) + tuple(lhs_dilation))
    rhs_trans = dilate_shape([rhs.shape[i] for i in dn.rhs_spec], (1, 1) + tuple(rhs_dilation))
    out_trans = conv_shape_tuple(lhs_trans, rhs_trans, window_strides, padding,
                                 batch_group_count)
    shape = tuple(_dim(out_trans[i]) for i in np.argsort(dn.out_spec))
    dtype = lhs.dtype
    if preferred_element_type is not None:
        preferred = np.dtype(preferred_element_type)
        if preferred != dtype:
            _check_preferred(dtype, preferred)
        dtype = preferred
    weak = lhs.weak_type and rhs.weak_type
    return ShapedArray(shape, dtype, weak)


def _check_preferred(dtype, preferred):
    """JAX's ``_validate_preferred_element_type``."""
    if not (dtypes.is_int(dtype) and dtypes.is_float(preferred)):
        for test in (dtypes.is_int, dtypes.is_float, dtypes.is_complex):
            if test(dtype) and not test(preferred):
                raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                                "compatible combinations of (input_type, preferred_element_type)"
                                " are (integral, integral), (integral, floating), (floating, "
                                "floating), (complex, complex.")
        if dtypes.is_signed_int(dtype) and not dtypes.is_signed_int(preferred):
            raise TypeError("`preferred_element_type` must have the same signedness as the "
                            "original type.")
    if np.dtype(preferred).itemsize < np.dtype(dtype).itemsize:
        raise TypeError("`preferred_element_type` must not be narrower than the original type.")


conv_general_dilated_p = def_typing(Primitive("conv_general_dilated"), _conv_rule)
P = {"conv_general_dilated": conv_general_dilated_p}
