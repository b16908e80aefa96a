"""``jax.extend.lowering``: the MLIR context class, the dialect registry and the context a
lowering rule receives (``ctx.avals_in``, ``ctx.avals_out``, ``ctx.module_context``)."""
from traxla.lowering.mlir import JaxIrContext, upstream_dialects  # noqa: F401
from traxla.lowering.registry import RuleContext as LoweringRuleContext  # noqa: F401

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]
