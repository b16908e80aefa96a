"""Lowering of ``scaled_matmul_wrapper`` as the decomposition XLA's block-scaling rewriter
gives the block-scaled dot where no cuDNN kernel runs it: each operand and its scales are
converted to the output type, each scale is broadcast over its block of the contracting
axis and multiplies the operand, then one batched ``dot_general`` contracts the last axes.
(JAX 0.10.2 on CUDA emits the ``__op$block_scaled_dot`` custom call, which that rewriter
expands the same way unless cuDNN takes it; on CPU JAX has no lowering at all.)"""
from __future__ import annotations

from traxla.ir.rules.scaled_matmul import scaled_matmul_wrapper_p
from traxla.lowering.mlir import aval_type, hlo, i64_array
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.elementwise import convert
from traxla.lowering.rules.reduction import _dot_attrs


def _dequantize(value, aval, scales, scales_aval, out_dtype):
    batch, rows, contracting = aval.shape
    blocks = scales_aval.shape[-1]
    if blocks == 0 or contracting % blocks:
        raise ValueError(f"scaled_matmul: the contracting size {contracting} is not a multiple "
                         f"of the number of scale blocks {blocks}")
    block_size = contracting // blocks
    value = convert(value, aval, out_dtype)
    scales = convert(scales, scales_aval, out_dtype)
    expanded = scales_aval.update(shape=(batch, rows, blocks, block_size), dtype=out_dtype)
    scales = hlo.broadcast_in_dim(aval_type(expanded), scales, i64_array([0, 1, 2]))
    scales = hlo.reshape(aval_type(aval.update(dtype=out_dtype)), scales)
    return hlo.multiply(value, scales)


def _scaled_matmul_wrapper(ctx, lhs, rhs, lhs_scales, rhs_scales, *, preferred_element_type):
    lhs_aval, rhs_aval, lhs_scales_aval, rhs_scales_aval = ctx.avals_in
    out = ctx.aval_out
    lhs = _dequantize(lhs, lhs_aval, lhs_scales, lhs_scales_aval, out.dtype)
    rhs = _dequantize(rhs, rhs_aval, rhs_scales, rhs_scales_aval, out.dtype)
    attrs = _dot_attrs((((2,), (2,)), ((0,), (0,))))
    return [hlo.dot_general(aval_type(out), lhs, rhs, attrs["dot_dimension_numbers"],
                            precision_config=attrs["precision_config"])]


register_lowering(scaled_matmul_wrapper_p, _scaled_matmul_wrapper)
