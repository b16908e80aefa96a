"""Lowering of ``jit`` (and of ``call`` / ``closed_call``, as JAX's: a private function
named after the primitive): a private function, called with ``func.call``. A jaxpr with ordered
effects takes the caller's token first and returns the next one first."""
from __future__ import annotations

from traxla.ir.effects import has_ordered_effects
from traxla.ir.jaxpr import ClosedJaxpr
from traxla.ir.rules.call import call_p, closed_call_p, jit_p
from traxla.lowering.module import _OWN_CONSTRAINT
from traxla.ir.shape_poly import DimExpr
from traxla.lowering.dynamic_shapes import dim_value
from traxla.lowering.mlir import aval_type, create_op, func, hlo, ir
from traxla.lowering.registry import register_lowering


def _jit(ctx, *args, jaxpr, name):
    return call_function(ctx.module, jaxpr, name, args, ctx.avals_out)


def call_function(module, jaxpr, name, args, avals_out):
    """``func.call`` of ``jaxpr`` (a ClosedJaxpr) as the module's private function ``name``
    (one function per jaxpr), the results of ``avals_out``."""
    symbol = module.function_for(jaxpr, name)
    # a shape-polymorphic export: the dimension values go first (before the token)
    dims = [dim_value(DimExpr.var(n)) for n in module.dim_vars]
    if module.platforms is not None:  # a module for several platforms: its index first
        dims = [module.platform_index] + dims
    types = [aval_type(a) for a in avals_out]
    if has_ordered_effects(jaxpr.jaxpr):
        token = module.token if module.token is not None else hlo.create_token()
        call = func.CallOp([hlo.TokenType.get()] + types, ir.FlatSymbolRefAttr.get(symbol),
                           dims + [token] + list(args))
        module.token = call.results[0]
        return list(call.results)[1:]
    attrs = module.call_attributes.get(symbol)
    if attrs is None:
        attrs = module.call_attributes[symbol] = {"callee": ir.FlatSymbolRefAttr.get(symbol)}
    return list(create_op("func.call", results=types, operands=dims + list(args),
                          attributes=attrs).results)


register_lowering(jit_p, _jit)
_OWN_CONSTRAINT.add(jit_p)  # (a func.call: its callee constrains its results)


def _call(name, ctx, *args, call_jaxpr, **params):
    closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
    return _jit(ctx, *args, jaxpr=closed, name=name)


register_lowering(call_p, lambda ctx, *args, **params: _call("call", ctx, *args, **params))
register_lowering(closed_call_p,
                  lambda ctx, *args, **params: _call("closed_call", ctx, *args, **params))
