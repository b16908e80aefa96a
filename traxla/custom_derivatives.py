"""``traxla.custom_derivatives``: the names of ``jax.custom_derivatives``."""
from traxla.autodiff.custom import (custom_jvp, custom_jvp_call_p, custom_vjp,  # noqa: F401
                              custom_vjp_call_p)
from traxla.api.vjp_tools import closure_convert, custom_gradient, linear_call  # noqa: F401

__all__ = ["closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p", "custom_vjp",
           "custom_vjp_call_p"]
from traxla.autodiff.symbolic_zeros import (CustomVJPPrimal, SymbolicZero,  # noqa: F401,E402
                                      custom_vjp_primal_tree_values, zero_from_primal)

__all__ += ["linear_call", "CustomVJPPrimal", "SymbolicZero", "custom_vjp_primal_tree_values",
            "zero_from_primal"]
