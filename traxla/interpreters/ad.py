"""Differentiation rules from user code, as ``jax.interpreters.ad``:
``primitive_jvps[p] = jvp(primals, tangents, **params) -> (primal_out, tangent_out)`` and
``primitive_transposes[p] = transpose(ct, *operands, **params) -> cts`` (tangents and
cotangents may be symbolic ``Zero``s; linear operands are ``UndefinedPrimal``s)."""
from __future__ import annotations

from traxla.autodiff.ad import (UndefinedPrimal, Zero, instantiate, is_undefined,  # noqa: F401
                             jvp_rules, transpose_rules)
from traxla.autodiff.rules._util import defjvp as _defjvp

primitive_jvps = jvp_rules
primitive_transposes = transpose_rules


def is_undefined_primal(x) -> bool:
    return is_undefined(x)


def instantiate_zeros(t):
    """A symbolic Zero made an array of zeros; other tangents unchanged."""
    return instantiate(t)


def defjvp(prim, *jvp_rules_):
    """One rule per operand: ``rule(tangent, *primals, **params)`` gives that operand's
    contribution to the output tangent."""
    _defjvp(prim, *jvp_rules_)


__all__ = ["primitive_jvps", "primitive_transposes", "Zero", "UndefinedPrimal",
           "is_undefined_primal", "instantiate_zeros", "defjvp"]
