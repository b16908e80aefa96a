"""Lowering ``linear_call``: the callee inlined."""
from __future__ import annotations

from traxla.ir.rules.linear_call import linear_call_p
from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering


def _linear_call(ctx, *args, callee, transpose_thunk, num_callee_consts, num_res):
    j = callee.jaxpr
    consts = [const_value(v.aval, c) for v, c in zip(j.constvars, callee.consts)]
    return emit_jaxpr(ctx.module, j, consts, list(args))


register_lowering(linear_call_p, _linear_call)
