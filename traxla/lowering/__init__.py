"""Lowering: a registry from primitive to StableHLO emitter, and the module builder.
Imports ``ir/`` only (plus jaxlib's MLIR bindings)."""
from traxla.lowering import rules  # noqa: F401  (registers the rules)
from traxla.lowering.module import ModuleShardings, host_callbacks_of, lower_jaxpr, verify
from traxla.lowering.registry import lowering_rules, register_lowering

__all__ = ["lower_jaxpr", "verify", "lowering_rules", "register_lowering"]
