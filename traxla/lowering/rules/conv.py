"""Lowering of ``conv_general_dilated`` to ``stablehlo.convolution``. On CPU, as JAX does,
a complex convolution becomes three real ones (Gauss's product), since XLA's CPU
complex convolution is a slow loop."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.conv import conv_general_dilated_p
from traxla.lowering.mlir import aval_type, hlo, i64_array, ir, tensor_type
from traxla.lowering.registry import mark_platform_sensitive, register_lowering


def precision_attr(precision):
    """``None``, a pair of ``Precision`` values or a ``DotAlgorithmPreset`` (which leaves the
    precision to the algorithm, as JAX's ``_full_precision``) as StableHLO's precision_config."""
    names = (tuple(p.name for p in precision) if type(precision) is tuple  # (not DotAlgorithm)
             else ("DEFAULT", "DEFAULT"))
    return ir.ArrayAttr.get([hlo.PrecisionAttr.get(n) for n in names])


def _dimension_numbers(dn):
    lhs_spec, rhs_spec, out_spec = dn
    return hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0], kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))


def _convolution(result_type, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                 dimension_numbers, feature_group_count, batch_group_count, precision):
    i64 = ir.IntegerType.get_signless(64)
    nsp = len(dimension_numbers.rhs_spec) - 2
    pads = np.asarray(padding, np.int64).reshape(nsp, 2)
    return hlo.convolution(
        result_type, lhs, rhs, dimension_numbers=_dimension_numbers(dimension_numbers),
        feature_group_count=ir.IntegerAttr.get(i64, feature_group_count),
        batch_group_count=ir.IntegerAttr.get(i64, batch_group_count),
        window_strides=i64_array(window_strides),
        padding=ir.DenseIntElementsAttr.get(pads, shape=(nsp, 2)),
        lhs_dilation=i64_array(lhs_dilation), rhs_dilation=i64_array(rhs_dilation),
        window_reversal=ir.DenseBoolArrayAttr.get([False] * nsp),
        precision_config=precision_attr(precision))


def _conv_lowering(ctx, lhs, rhs, *, precision=None, preferred_element_type=None,
                   out_sharding=None, **params):
    lhs_aval, rhs_aval = ctx.avals_in
    out = ctx.aval_out
    if dtypes.is_complex(lhs_aval.dtype) and ctx.module.platform in ("cpu", "cuda", "gpu"):
        real = np.finfo(lhs_aval.dtype).dtype
        real_out = tensor_type(out.shape, np.finfo(out.dtype).dtype)

        def part(op, x, aval):
            return op(x)

        def mul(a, b):
            return _convolution(real_out, a, b, precision=precision, **params)

        x_re, x_im = part(hlo.real, lhs, lhs_aval), part(hlo.imag, lhs, lhs_aval)
        y_re, y_im = part(hlo.real, rhs, rhs_aval), part(hlo.imag, rhs, rhs_aval)
        k1 = mul(hlo.add(x_re, x_im), y_re)
        k2 = mul(x_re, hlo.subtract(y_im, y_re))
        k3 = mul(x_im, hlo.add(y_re, y_im))
        return hlo.complex(hlo.subtract(k1, k3), hlo.add(k1, k2))
    return _convolution(aval_type(out), lhs, rhs, precision=precision, **params)


register_lowering(conv_general_dilated_p, _conv_lowering)
mark_platform_sensitive(conv_general_dilated_p,  # complex operands: by platform
                        lambda eqn: dtypes.is_complex(eqn.invars[0].aval.dtype))
