"""Automatic differentiation: jvp, linearize, vjp, grad and friends, as traces
and jaxpr rewrites (imports tracer/, ir/ and lax)."""
from . import call, rules  # noqa: F401  (registers the rules)
from .core import (Zero, grad, jvp, jvp_rules, linearize, transpose_rules, value_and_grad, vjp)

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "jvp_rules", "transpose_rules", "Zero"]
