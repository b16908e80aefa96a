"""Lowering of ``top_k`` (CHLO's top_k along the last axis, transposing other axes there
and back, as JAX) and ``approx_top_k`` (the exact fallback JAX's CPU lowering asks XLA for:
the k largest, or the k smallest as the k largest of the negation; on TPU the TPU's own
``ApproxTopK`` custom call, as JAX's TPU rule)."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.topk import approx_top_k_p, top_k_p
from traxla.lowering.mlir import aval_type, chlo, constant, func, hlo, ir
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


def _comparator(ctx, element_type, is_max_k):
    """The ``top_k_{gt,lt}_<type>_comparator`` function ApproxTopK calls, as JAX emits it."""
    scalar = ir.RankedTensorType.get([], element_type)
    index = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    ftype = ir.FunctionType.get([scalar, scalar, index, index],
                                [ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))])
    builder = ctx.module
    with ir.InsertionPoint.at_block_begin(builder.module.body):
        fn = func.FuncOp(f"top_k_{'gt' if is_max_k else 'lt'}_{element_type}_comparator", ftype)
    name = ir.StringAttr(builder.symbol_table.insert(fn)).value
    with ir.InsertionPoint(fn.add_entry_block()):
        a, b, _, _ = fn.entry_block.arguments
        hlo.return_([hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(
            "GT" if is_max_k else "LT"))])
    return name


def _approx_top_k_tpu(ctx, operand, *, k, reduction_dimension, recall_target, is_max_k,
                      reduction_input_size_override, aggregate_to_topk):
    """On TPU, XLA's approximate ``ApproxTopK`` custom call (JAX's TPU rule): the TPU's own
    algorithm, so results are JAX's there, approximate as documented."""
    aval = ctx.avals_in[0]
    ndim = len(aval.shape)
    axis = reduction_dimension % ndim
    element_type = ir.RankedTensorType(operand.type).element_type
    comparator = _comparator(ctx, element_type, is_max_k)
    iota = hlo.iota(ir.RankedTensorType.get(list(aval.shape), ir.IntegerType.get_signless(32)),
                    _i64(axis))
    init_index = constant(np.int32(-1), np.int32)
    init_value = constant(np.array(-np.inf if is_max_k else np.inf, aval.dtype), aval.dtype)
    f32 = ir.F32Type.get()
    config = {"reduction_dim": _i64(axis),
              "recall_target": ir.FloatAttr.get(f32, recall_target),
              "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
              "reduction_input_size_override": _i64(reduction_input_size_override),
              "top_k": _i64(k)}
    op = custom_call("ApproxTopK", result_types=[aval_type(a) for a in ctx.avals_out],
                     operands=[operand, iota, init_value, init_index], backend_config=config)
    op.operation.attributes["called_computations"] = ir.ArrayAttr.get(
        [ir.FlatSymbolRefAttr.get(comparator)])
    return list(op.results)


register_lowering(top_k_p, _top_k)
register_lowering(approx_top_k_p, _approx_top_k)
register_lowering(approx_top_k_p, _approx_top_k_tpu, platform="tpu")
