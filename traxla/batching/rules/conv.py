"""Batching of ``conv_general_dilated`` as JAX folds it: the vmapped dimension is reshaped
into the batch dimension (lhs only), into the output-feature dimension (rhs only), or
into feature groups (both), and split back out of the result."""
from __future__ import annotations

from traxla import lax
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.conv import conv_general_dilated_p
from traxla.lax.convolution import conv_general_dilated, reshape_axis_into, reshape_axis_out_of
from traxla.batching.batch_trace import register_batching


def _conv_batch(size, vals, dims, *, window_strides, padding, lhs_dilation, rhs_dilation,
                dimension_numbers, feature_group_count, batch_group_count, precision,
                preferred_element_type, out_sharding=None):
    lhs, rhs = vals
    lhs_bdim, rhs_bdim = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_shape, rhs_shape = lax.shape_of(lhs), lax.shape_of(rhs)
    # (an out_sharding has the result's rank, which folding the vmapped dimension keeps)
    kw = dict(precision=precision, preferred_element_type=preferred_element_type,
              out_sharding=out_sharding)
    conv = lambda l, r, fgc, bgc: conv_general_dilated(  # noqa: E731
        l, r, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        fgc, bgc, **kw)
    if size == 0:
        unbatched = [ShapedArray(tuple(d for i, d in enumerate(s) if i != b), lax.dtype_of(v))
                     for v, s, b in ((lhs, lhs_shape, lhs_bdim), (rhs, rhs_shape, rhs_bdim))]
        out = conv_general_dilated_p.abstract_eval(
            *unbatched, window_strides=window_strides, padding=padding,
            lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
            dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
            batch_group_count=batch_group_count, precision=precision,
            preferred_element_type=preferred_element_type)
        return lax.full((0,) + out.shape, 0, out.dtype), 0
    if lhs_bdim is not None and rhs_bdim is not None:
        if batch_group_count > 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            batch_group_count *= size
        else:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[1], lhs)
            feature_group_count *= size
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(new_lhs, new_rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if lhs_bdim is not None:
        if batch_group_count == 1:
            new_lhs = reshape_axis_into(lhs_bdim, lhs_spec[0], lhs)
            out = conv(new_lhs, rhs, feature_group_count, 1)
            return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
        new_lhs = reshape_axis_out_of(lhs_spec[0] + int(lhs_bdim <= lhs_spec[0]),
                                      batch_group_count, lhs)
        new_lhs = reshape_axis_into(lhs_bdim + int(lhs_spec[0] < lhs_bdim), lhs_spec[0] + 1,
                                    new_lhs)
        new_lhs = reshape_axis_into(lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(new_lhs, rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    if feature_group_count == 1 and batch_group_count == 1:
        new_rhs = reshape_axis_into(rhs_bdim, rhs_spec[0], rhs)
        out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if out_sharding is not None:  # (as JAX)
        raise NotImplementedError
    group_count = feature_group_count if feature_group_count > 1 else batch_group_count
    new_rhs = reshape_axis_out_of(rhs_spec[0] + int(rhs_bdim <= rhs_spec[0]), group_count, rhs)
    new_rhs = reshape_axis_into(rhs_bdim + int(rhs_spec[0] < rhs_bdim), rhs_spec[0] + 1,
                                new_rhs)
    new_rhs = reshape_axis_into(rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(lhs, new_rhs, feature_group_count, batch_group_count)
    out = reshape_axis_out_of(out_spec[1], group_count, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


register_batching(conv_general_dilated_p, _conv_batch)
