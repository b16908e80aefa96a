"""Lowering rules from user code: ``register_lowering(prim, rule)`` with
``rule(ctx, *operands, **params) -> [ir.Value, ...]`` (StableHLO ops from ``hlo``), or
``lower_fun(fn)`` to lower a primitive as the traxla function ``fn`` computes it."""
from __future__ import annotations

from traxla.lowering.mlir import constant, hlo, ir  # noqa: F401
from traxla.lowering.module import emit_jaxpr, const_value
from traxla.lowering.registry import register_lowering as _register
from traxla.tracer import trace_to_jaxpr


def ir_constant(value):
    """A StableHLO constant for a NumPy value or a Python scalar."""
    return constant(value)


def register_lowering(prim, rule, platform: str | None = None):
    """Registers ``rule(ctx, *operands, **params)`` returning a sequence of ir.Values
    (one per result). ``ctx.avals_in``/``ctx.avals_out`` are the operand and result types.
    ``platform``: 'cpu', 'tpu', 'cuda', 'rocm', 'gpu' (CUDA and ROCm) or None (every
    platform without a rule of its own). Returns None, as JAX's."""
    def lowering(ctx, *args, **params):
        out = rule(ctx, *args, **params)
        if isinstance(out, ir.Value):
            out = [out]
        out = [v.result if hasattr(v, "result") and not isinstance(v, ir.Value) else v
               for v in out]
        return out if prim.multiple_results else out[0]
    _register(prim, lowering, platform=platform)


def lower_fun(fun, multiple_results: bool = True):
    """A lowering rule that traces ``fun(*operands, **params)`` (traxla operations) at the
    operand types and emits its equations in place."""
    def rule(ctx, *args, **params):

        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        closed = trace_to_jaxpr(flat, list(ctx.avals_in))
        consts = [const_value(v.aval, c) for v, c in zip(closed.jaxpr.constvars, closed.consts)]
        return emit_jaxpr(ctx.module, closed.jaxpr, consts, list(args))
    return rule


__all__ = ["register_lowering", "lower_fun", "ir", "hlo", "ir_constant"]
