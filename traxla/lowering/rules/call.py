"""Lowering of ``jit``: a private function, called with ``func.call``."""
from __future__ import annotations

from ...ir.rules.call import jit_p
from ..mlir import aval_type, func, ir
from ..registry import register_lowering


def _jit(ctx, *args, jaxpr, name):
    symbol = ctx.module.function_for(jaxpr, name)
    call = func.CallOp([aval_type(a) for a in ctx.avals_out], ir.FlatSymbolRefAttr.get(symbol),
                       list(args))
    return list(call.results)


register_lowering(jit_p, _jit)
