"""``ffi_call`` has no derivative of its own: as in JAX, differentiating it raises and
says to wrap the call in ``custom_jvp``/``custom_vjp``."""
from __future__ import annotations

from traxla.ir.rules.ffi import ffi_call_p
from traxla.autodiff.ad import jvp_rules, transpose_rules


def _not_differentiable(*args, target_name, **params):
    raise ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. "
        "You can use `jax.custom_jvp` or `jax.custom_jvp` to add support.")


jvp_rules[ffi_call_p] = _not_differentiable
transpose_rules[ffi_call_p] = _not_differentiable
