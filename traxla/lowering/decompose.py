"""Lowering by decomposition: a primitive lowered as the inline emission of a jaxpr of other
primitives (JAX's ``mlir.lower_fun``). The jaxpr comes from a builder that the layer owning
tracing registers (``traxla.lax.special``, ``traxla.random``), so this stage never traces."""
from __future__ import annotations

from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering

_decompositions: dict = {}     # primitive -> builder(avals_in, params) -> ClosedJaxpr
_decomposed: dict = {}         # (primitive, avals_in, params) -> ClosedJaxpr


def register_decomposition(prim, build):
    """Lowers ``prim`` by emitting the jaxpr ``build(avals_in, params)`` returns inline."""
    _decompositions[prim] = build

    def rule(ctx, *args, **params):
        key = (prim, tuple(ctx.avals_in), tuple(sorted(params.items())))
        closed = _decomposed.get(key)
        if closed is None:
            closed = _decomposed[key] = build(tuple(ctx.avals_in), params)
        consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        outs = emit_jaxpr(ctx.module, closed.jaxpr, consts, list(args))
        return outs if prim.multiple_results else outs[0]

    register_lowering(prim, rule)
