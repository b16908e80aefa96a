"""Differentiation rules from user code, as ``jax.interpreters.ad``:
``primitive_jvps[p] = jvp(primals, tangents, **params) -> (primal_out, tangent_out)`` and
``primitive_transposes[p] = transpose(ct, *operands, **params) -> cts`` (tangents and
cotangents may be symbolic ``Zero``s; linear operands are ``UndefinedPrimal``s)."""
from __future__ import annotations

from collections.abc import MutableMapping

from traxla.autodiff.ad import (JVPTrace, JVPTracer, UndefinedPrimal, Zero,  # noqa: F401
                                instantiate, is_undefined, jvp_rules, transpose_rules)
from traxla.autodiff.rules._util import defjvp as _defjvp
from traxla.ir.jaxpr import Literal


class _Jvps(MutableMapping):
    """JAX's rule signature over traxla's registry: a rule set here gets the primals and
    the tangents as tuples (traxla's own rules get lists); reading a primitive without a
    rule of user code gives traxla's."""

    def __init__(self):
        self._user: dict = {}

    def __setitem__(self, prim, rule):
        self._user[prim] = rule
        jvp_rules[prim] = lambda primals, tangents, **params: rule(
            tuple(_values(primals)), tuple(tangents), **params)

    def __getitem__(self, prim):
        return self._user[prim] if prim in self._user else jvp_rules[prim]

    def __delitem__(self, prim):
        del self._user[prim]
        jvp_rules.pop(prim, None)

    def __iter__(self):
        return iter(jvp_rules)

    def __len__(self):
        return len(jvp_rules)


def _values(args):
    """What a rule of user code gets for a constant of a jaxpr being replayed: its value
    (JAX's eval_jaxpr reads a Literal's ``val``), not traxla's ``Literal``."""
    return [a.val if type(a) is Literal else a for a in args]


primitive_jvps = _Jvps()


class _Transposes(_Jvps):
    """JAX's rule signature over traxla's registry: a rule set here gets an operand that is
    a literal of the jaxpr as its value (traxla's own rules get the Literal)."""

    def __setitem__(self, prim, rule):
        self._user[prim] = rule

        def transpose(ct, *args, **params):
            return rule(ct, *_values(args), **params)
        transpose_rules[prim] = transpose

    def __getitem__(self, prim):
        return self._user[prim] if prim in self._user else transpose_rules[prim]

    def __delitem__(self, prim):
        del self._user[prim]
        transpose_rules.pop(prim, None)

    def __iter__(self):
        return iter(transpose_rules)

    def __len__(self):
        return len(transpose_rules)


primitive_transposes = _Transposes()


def is_undefined_primal(x) -> bool:
    return is_undefined(x)


def instantiate_zeros(t):
    """A symbolic Zero made an array of zeros; other tangents unchanged."""
    return instantiate(t)


def defjvp(prim, *jvp_rules_):
    """One rule per operand: ``rule(tangent, *primals, **params)`` gives that operand's
    contribution to the output tangent."""
    _defjvp(prim, *jvp_rules_)


__all__ = ["JVPTrace", "JVPTracer", "primitive_jvps", "primitive_transposes", "Zero", "UndefinedPrimal",
           "is_undefined_primal", "instantiate_zeros", "defjvp"]
