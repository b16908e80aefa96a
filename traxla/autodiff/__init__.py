"""Automatic differentiation: jvp, linearize, vjp, grad and friends, as traces and jaxpr
rewrites (the machinery: it binds primitives through ``traxla.primitives``). The JVP and
transpose rules live in ``autodiff/rules/``, a layer above ``lax`` and ``numpy``; they register
into ``jvp_rules``/``transpose_rules`` when ``traxla`` is imported."""
from traxla.autodiff.ad import (Zero, grad, jvp, jvp_rules, linearize, transpose_rules, value_and_grad, vjp)
from traxla.autodiff.custom import custom_jvp, custom_vjp
from traxla.autodiff.jac import hessian, jacfwd, jacrev

__all__ = ["grad", "value_and_grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian",
           "custom_jvp", "custom_vjp", "jvp_rules", "transpose_rules", "Zero"]
