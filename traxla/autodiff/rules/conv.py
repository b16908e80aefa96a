"""JVP and transposes of ``conv_general_dilated`` (JAX's lax/convolution.py): the
convolution is bilinear; each transpose is another convolution, with the roles of
strides and dilations exchanged and the feature/batch groups moved as the comments
in JAX's source derive them."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.rules.conv import ConvDimensionNumbers, conv_general_dilated_p, dilate_shape
from traxla.lax.convolution import conv_general_dilated, reshape_axis_into, reshape_axis_out_of
from traxla.autodiff.ad import Zero
from traxla.autodiff.rules._util import def_bilinear_transpose, defjvp


def _spec_transpose(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _sdims(spec):
    return tuple(spec[2:])


def conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                         lhs_dilation, rhs_dilation):
    lhs_dilated = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = dilate_shape(out_shape, window_strides)
    before = np.subtract(rhs_dilated, [lo for lo, _ in padding]) - 1
    after = np.add(lhs_dilated, rhs_dilated) - 1 - out_dilated - before
    return [(int(b), int(a)) for b, a in zip(before, after)]


def conv_vjp_rhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                         lhs_dilation, rhs_dilation):
    if len(in_shape) == 0:
        return []
    lhs_dilated = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = dilate_shape(out_shape, window_strides)
    pads_lo = [lo for lo, _ in padding]
    from_lhs = [o - l for o, l in zip(out_dilated, lhs_dilated)]
    from_rhs = [rd - pd - 1 for rd, pd in zip(rhs_dilated, pads_lo)]
    return [(int(lo), int(a + b)) for lo, a, b in zip(pads_lo, from_lhs, from_rhs)]


def _transpose_lhs(g, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding=None):
    rhs_shape = lax.shape_of(rhs)
    lhs_aval = lhs.aval
    lhs_sdims, rhs_sdims, out_sdims = map(_sdims, dimension_numbers)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    t_rhs_spec = _spec_transpose(rhs_spec)
    if feature_group_count > 1:
        rhs = reshape_axis_out_of(rhs_spec[0], feature_group_count, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    elif batch_group_count > 1:
        rhs = reshape_axis_out_of(rhs_spec[0], batch_group_count, rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
        feature_group_count = batch_group_count
    trans_dn = ConvDimensionNumbers(out_spec, t_rhs_spec, lhs_spec)
    padding = conv_vjp_lhs_padding(
        np.take(lhs_aval.shape, lhs_sdims), np.take(rhs_shape, rhs_sdims), window_strides,
        np.take(lax.shape_of(g), out_sdims), padding, lhs_dilation, rhs_dilation)
    revd = lax.rev(rhs, rhs_sdims)
    if lax.dtype_of(g) != lax.dtype_of(revd):
        revd = lax.convert_element_type(revd, lax.dtype_of(g))
    out = conv_general_dilated(
        g, revd, window_strides=lhs_dilation, padding=padding, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation, dimension_numbers=trans_dn,
        feature_group_count=feature_group_count, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type, out_sharding=lhs_aval.sharding_type)
    if lax.dtype_of(out) != lhs_aval.dtype:
        out = lax.convert_element_type(out, lhs_aval.dtype)
    if batch_group_count > 1:
        out = reshape_axis_out_of(lhs_spec[1], batch_group_count, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    return out


def _transpose_rhs(g, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding=None):
    if int(np.prod(lax.shape_of(g))) == 0:
        return Zero(rhs.aval)
    lhs_shape, rhs_shape = lax.shape_of(lhs), rhs.aval.shape
    lhs_sdims, rhs_sdims, out_sdims = map(_sdims, dimension_numbers)
    lhs_trans, rhs_trans, out_trans = map(_spec_transpose, dimension_numbers)
    if batch_group_count > 1:
        feature_group_count, batch_group_count = batch_group_count, 1
    elif feature_group_count > 1:
        batch_group_count, feature_group_count = feature_group_count, 1
    trans_dn = ConvDimensionNumbers(lhs_trans, out_trans, rhs_trans)
    padding = conv_vjp_rhs_padding(
        np.take(lhs_shape, lhs_sdims), np.take(rhs_shape, rhs_sdims), window_strides,
        np.take(lax.shape_of(g), out_sdims), padding, lhs_dilation, rhs_dilation)
    if lax.dtype_of(g) != lax.dtype_of(lhs):
        lhs = lax.convert_element_type(lhs, lax.dtype_of(g))
    out = conv_general_dilated(
        lhs, g, window_strides=rhs_dilation, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides, dimension_numbers=trans_dn,
        feature_group_count=feature_group_count, batch_group_count=batch_group_count,
        precision=precision, preferred_element_type=preferred_element_type,
        out_sharding=rhs.aval.sharding_type)
    if lax.dtype_of(out) != rhs.aval.dtype:
        out = lax.convert_element_type(out, rhs.aval.dtype)
    return out


defjvp(conv_general_dilated_p,
       lambda g, x, y, **params: conv_general_dilated_p.bind(g, y, **params),
       lambda g, x, y, **params: conv_general_dilated_p.bind(x, g, **params))
def_bilinear_transpose(conv_general_dilated_p, "convolution", _transpose_lhs, _transpose_rhs)
