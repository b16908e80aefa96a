"""Lowering of ``top_k`` (CHLO's top_k along the last axis, transposing other axes there
and back, as JAX) and ``approx_top_k`` (the exact fallback JAX's CPU lowering asks XLA for:
the k largest, or the k smallest as the k largest of the negation); on TPU, XLA's
``ApproxTopK`` custom call with its comparator function, as JAX lowers it there."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.lowering.mlir import aval_type, chlo, constant, element_type, func, hlo, ir, tensor_type
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.ffi import custom_call


def _i64(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))


def _top_k_last_axis(operand, k, axis, ndim):
    perm = None
    if axis != ndim - 1:
        perm = list(range(ndim))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        operand = hlo.transpose(operand, ir.DenseI64ArrayAttr.get(perm))
    results = list(chlo.top_k(operand, _i64(k)))
    if perm is not None:
        results = [hlo.transpose(r, ir.DenseI64ArrayAttr.get(perm)) for r in results]
    return results


def _top_k(ctx, operand, *, k, axis):
    return _top_k_last_axis(operand, k, axis, len(ctx.avals_in[0].shape))


def _approx_top_k(ctx, operand, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    ndim = len(ctx.avals_in[0].shape)
    axis = reduction_dimension % ndim
    if is_max_k:
        return _top_k_last_axis(operand, k, axis, ndim)
    values, indices = _top_k_last_axis(hlo.negate(operand), k, axis, ndim)
    return [hlo.negate(values), indices]


register_lowering(top_k_p, _top_k)
register_lowering(approx_top_k_p, _approx_top_k)


def _comparator(module, op_type, is_max_k):
    """JAX's ``_comparator_builder_mlir``: ``(value, value, index, index) -> value order``."""
    scalar, index = ir.RankedTensorType.get([], op_type), tensor_type((), np.int32)
    fn_type = ir.FunctionType.get([scalar, scalar, index, index], [tensor_type((), np.bool_)])
    with ir.InsertionPoint.at_block_begin(module.module.body):
        comparator = func.FuncOp(f"top_k_{'gt' if is_max_k else 'lt'}_{op_type}_comparator",
                                 fn_type)
    module.symbol_table.insert(comparator)
    block = comparator.add_entry_block()
    with ir.InsertionPoint(block):
        p0, p1, _, _ = block.arguments
        direction = hlo.ComparisonDirectionAttr.get("GT" if is_max_k else "LT")
        func.ReturnOp([hlo.compare(p0, p1, comparison_direction=direction)])
    return comparator.name.value


def _approx_top_k_tpu(ctx, operand, *, k, reduction_dimension, recall_target, is_max_k,
                      reduction_input_size_override, aggregate_to_topk):
    aval = ctx.avals_in[0]
    if len(aval.shape) == 0:
        raise ValueError(f"operand must be an array, but was {aval.shape}")
    if reduction_dimension < 0:
        reduction_dimension = len(aval.shape) + reduction_dimension
    comparator = _comparator(ctx.module, element_type(aval.dtype), is_max_k)
    iota = hlo.iota(tensor_type(aval.shape, np.int32), reduction_dimension)
    init_val = constant(np.array(-np.inf if is_max_k else np.inf, dtype=aval.dtype), aval.dtype)
    init_arg = constant(np.int32(-1), np.int32)
    i64 = lambda v: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))  # noqa: E731
    config = {"reduction_dim": i64(reduction_dimension),
              "recall_target": ir.FloatAttr.get(ir.F32Type.get(), recall_target),
              "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
              "reduction_input_size_override": i64(reduction_input_size_override),
              "top_k": i64(k)}
    op = custom_call("ApproxTopK", result_types=[aval_type(a) for a in ctx.avals_out],
                     operands=[operand, iota, init_val, init_arg], backend_config=config)
    op.operation.attributes["called_computations"] = ir.ArrayAttr.get(
        [ir.FlatSymbolRefAttr.get(comparator)])
    return list(op.results)


register_lowering(approx_top_k_p, _approx_top_k_tpu, platform="tpu")
