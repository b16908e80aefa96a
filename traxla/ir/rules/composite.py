"""``composite``: a named operation with a decomposition (a closed jaxpr), lowered to
``stablehlo.composite`` so that a backend may replace it; attributes are static."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing

composite_p = Primitive("composite", multiple_results=True)


def _composite_rule(*avals, name, attributes, version, jaxpr):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(
            a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
        raise TypeError(f"composite '{name}' called with {[a.str_short() for a in avals]} but its "
                        f"decomposition takes {[e.str_short() for e in expected]}.")
    return list(jaxpr.out_avals)


def_typing(composite_p, _composite_rule)
