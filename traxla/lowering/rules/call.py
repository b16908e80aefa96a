"""Lowering of ``jit``: a private function, called with ``func.call``. A jaxpr with ordered
effects takes the caller's token first and returns the next one first."""
from __future__ import annotations

from traxla.ir.effects import has_ordered_effects
from traxla.ir.rules.call import jit_p
from traxla.ir.shape_poly import DimExpr
from traxla.lowering.dynamic_shapes import dim_value
from traxla.lowering.mlir import aval_type, create_op, func, hlo, ir
from traxla.lowering.registry import register_lowering


def _jit(ctx, *args, jaxpr, name):
    symbol = ctx.module.function_for(jaxpr, name)
    # a shape-polymorphic export: the dimension values go first (before the token)
    dims = [dim_value(DimExpr.var(n)) for n in ctx.module.dim_vars]
    if ctx.module.platforms is not None:  # a module for several platforms: its index first
        dims = [ctx.module.platform_index] + dims
    types = [aval_type(a) for a in ctx.avals_out]
    if has_ordered_effects(jaxpr.jaxpr):
        module = ctx.module
        token = module.token if module.token is not None else hlo.create_token()
        call = func.CallOp([hlo.TokenType.get()] + types, ir.FlatSymbolRefAttr.get(symbol),
                           dims + [token] + list(args))
        module.token = call.results[0]
        return list(call.results)[1:]
    attrs = ctx.module.call_attributes.get(symbol)
    if attrs is None:
        attrs = ctx.module.call_attributes[symbol] = {"callee": ir.FlatSymbolRefAttr.get(symbol)}
    return list(create_op("func.call", results=types, operands=dims + list(args),
                          attributes=attrs).results)


register_lowering(jit_p, _jit)
