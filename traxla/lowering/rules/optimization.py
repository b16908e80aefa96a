"""Lowering of ``reduce_precision``, ``optimization_barrier``, ``stage`` (nothing: its
operand) and ``dce_sink`` (nothing, or with ``prevent_mlir_dce`` a side-effecting
``dce_sink`` custom call that keeps the value alive in the module, as JAX)."""
from __future__ import annotations

from traxla.ir.rules.optimization import (dce_sink_p, optimization_barrier_p, reduce_precision_p,
                                         stage_p)
from traxla.lowering.mlir import hlo, ir
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.ffi import ffi_lowering


def _reduce_precision(ctx, x, *, exponent_bits, mantissa_bits):
    i32 = ir.IntegerType.get_signless(32)
    return hlo.reduce_precision(x, ir.IntegerAttr.get(i32, exponent_bits),
                                ir.IntegerAttr.get(i32, mantissa_bits))


def _optimization_barrier(ctx, *args):
    if not args:
        return []
    return list(hlo.OptimizationBarrierOp(list(args)).results)


register_lowering(reduce_precision_p, _reduce_precision)
register_lowering(optimization_barrier_p, _optimization_barrier)


_dce_sink_call = ffi_lowering("dce_sink", has_side_effect=True)


def _dce_sink(ctx, x, *, prevent_mlir_dce):
    if prevent_mlir_dce:
        return _dce_sink_call(ctx, x)
    return []


register_lowering(stage_p, lambda ctx, x: x)
register_lowering(dce_sink_p, _dce_sink)
