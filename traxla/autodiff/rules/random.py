"""Keys and random bits are not differentiable: every random primitive has a
zero tangent (``float0`` for keys and integers)."""
from __future__ import annotations

from ..core import jvp_rules, zero_of
from ...ir.rules.random import P


def _zero_jvp(prim):
    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [zero_of(o) for o in out]
        return out, zero_of(out)
    return rule


for _prim in P.values():
    jvp_rules[_prim] = _zero_jvp(_prim)
