"""Lowering: a registry from primitive to StableHLO emitter, and the module builder.
Imports ``ir/`` only (plus jaxlib's MLIR bindings)."""
from . import rules  # noqa: F401  (registers the rules)
from .module import ModuleShardings, host_callbacks_of, lower_jaxpr, verify
from .registry import lowering_rules, register_lowering

__all__ = ["lower_jaxpr", "verify", "lowering_rules", "register_lowering"]
