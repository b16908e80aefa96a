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
from traxla.lowering.registry import register_direct_rule, register_lowering


def _jit(ctx, *args, jaxpr, name):
    return call_function(ctx.module, jaxpr, name, args, ctx.avals_out)


def _jit_direct(builder, eqn, operands, loc):
    params = eqn.params
    return call_function(builder, params["jaxpr"], params["name"], operands, eqn.outvars,
                         loc)


def call_function(module, jaxpr, name, args, avals_out, loc=None):
    """``func.call`` of ``jaxpr`` (a ClosedJaxpr) as the module's private function ``name``
    (one function per jaxpr), the results of ``avals_out`` (or of these variables).
    ``loc``: the call's location (None: the current one)."""
    if loc is not None and (module.dim_vars or module.platforms is not None):
        with loc:  # (the dimension values' ops, the token's)
            return call_function(module, jaxpr, name, args, avals_out)
    # a shape-polymorphic export: the dimension values go first (before the token)
    dims = [dim_value(DimExpr.var(n)) for n in module.dim_vars] if module.dim_vars else []
    if module.platforms is not None:  # a module for several platforms: its index first
        dims = [module.platform_index] + dims
    # the calls of one jaxpr (an inner jit called in every step of a loop) share the
    # callee's symbol, effects, result types and attributes: worked out at the first call
    key = (id(jaxpr), module.platform, module.platforms is None)
    hit = module.calls.get(key)
    if hit is None or hit[0] is not jaxpr:
        if loc is not None:  # (a new function's ops have their own locations)
            with loc:
                symbol = module.function_for(jaxpr, name)
        else:
            symbol = module.function_for(jaxpr, name)
        types = tuple(aval_type(getattr(a, "aval", a)) for a in avals_out)
        ordered = has_ordered_effects(jaxpr.jaxpr)
        attrs = module.call_attributes.get(symbol)
        if attrs is None:
            attrs = module.call_attributes[symbol] = {
                "callee": ir.FlatSymbolRefAttr.get(symbol)}
        hit = module.calls[key] = (jaxpr, symbol, types, ordered, attrs)
    _, symbol, types, ordered, attrs = hit
    if ordered:
        if loc is not None:
            with loc:
                return call_function(module, jaxpr, name, args, avals_out)
        token = module.token if module.token is not None else hlo.create_token()
        call = func.CallOp([hlo.TokenType.get(), *types], ir.FlatSymbolRefAttr.get(symbol),
                           dims + [token] + list(args))
        module.token = call.results[0]
        return list(call.results)[1:]
    call = create_op("func.call", types, dims + list(args) if dims else args, attrs, loc=loc)
    # (one result, the common case: ``.result``, a third of what listing ``.results`` costs)
    return [call.result] if len(types) == 1 else list(call.results)


register_direct_rule(jit_p, _jit_direct, _jit)
_OWN_CONSTRAINT.add(jit_p)  # (a func.call: its callee constrains its results)


def _call(name, ctx, *args, call_jaxpr, **params):
    closed = call_jaxpr if isinstance(call_jaxpr, ClosedJaxpr) else ClosedJaxpr(call_jaxpr, [])
    return _jit(ctx, *args, jaxpr=closed, name=name)


register_lowering(call_p, lambda ctx, *args, **params: _call("call", ctx, *args, **params))
register_lowering(closed_call_p,
                  lambda ctx, *args, **params: _call("closed_call", ctx, *args, **params))
