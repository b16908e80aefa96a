"""Lowering: a registry from primitive to StableHLO emitter, and the module builder.
Imports ``ir/`` only (plus jaxlib's MLIR bindings)."""
from . import rules  # noqa: F401  (registers the rules)
from .module import ModuleShardings, lower_jaxpr, verify
from .registry import lowering_rules, register_lowering

__all__ = ["lower_jaxpr", "verify", "lowering_rules", "register_lowering"]
