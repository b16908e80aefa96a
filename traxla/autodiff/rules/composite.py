"""``composite`` is not differentiable, as in JAX: its rules raise JAX's errors."""
from __future__ import annotations

from traxla.ir.rules.composite import composite_p
from traxla.autodiff.ad import jvp_rules, transpose_rules


def _composite_jvp(*args, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to "
                     "add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


def _composite_transpose(*args, **params):
    raise ValueError("Transpose rule for composite not implemented. You can use"
                     "`jax.custom_jvp` or `jax.custom_vjp` to add support. See "
                     "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")


jvp_rules[composite_p] = _composite_jvp
transpose_rules[composite_p] = _composite_transpose
