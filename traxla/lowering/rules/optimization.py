"""Lowering of ``reduce_precision`` and ``optimization_barrier``."""
from __future__ import annotations

from traxla.ir.rules.optimization import optimization_barrier_p, reduce_precision_p
from traxla.lowering.mlir import hlo, ir
from traxla.lowering.registry import register_lowering


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
