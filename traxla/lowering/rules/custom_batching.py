"""Lowering ``custom_vmap_call``: the function inlined (its rule only matters to vmap)."""
from __future__ import annotations

from traxla.ir.rules.custom_batching import custom_vmap_p
from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering


def _custom_vmap_call(ctx, *args, call, rule, in_tree, out_tree):
    j = call.jaxpr
    consts = [const_value(v.aval, c) for v, c in zip(j.constvars, call.consts)]
    return emit_jaxpr(ctx.module, j, consts, list(args))


register_lowering(custom_vmap_p, _custom_vmap_call)
