"""Lowering of ``remat2`` (the body inlined; once differentiated, the operands marked
``prevent_cse`` pass through an optimization barrier so that XLA cannot fold the
recomputation back into the forward pass, as JAX does) and ``name`` (the identity)."""
from __future__ import annotations

from traxla.ir.rules.ad_checkpoint import name_p, remat_p
from traxla.lowering.mlir import hlo
from traxla.lowering.module import emit_jaxpr
from traxla.lowering.registry import register_lowering


def _remat(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
    flags = (prevent_cse,) * len(args) if isinstance(prevent_cse, bool) else tuple(prevent_cse)
    args = list(args)
    if differentiated and any(flags):
        barred = [i for i, f in enumerate(flags) if f]
        barrier = hlo.OptimizationBarrierOp([args[i] for i in barred])
        for i, value in zip(barred, barrier.results):
            args[i] = value
    return emit_jaxpr(ctx.module, jaxpr, [], args)


register_lowering(remat_p, _remat)
register_lowering(name_p, lambda ctx, x, *, name: x)
