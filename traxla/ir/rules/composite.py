"""``composite``: a named operation with a decomposition (a closed jaxpr), lowered to
``stablehlo.composite`` so that a backend may replace it; attributes are static."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_call_operands

composite_p = Primitive("composite", multiple_results=True)


def _composite_rule(*avals, name, attributes, version, jaxpr):
    check_call_operands(avals, jaxpr.in_avals, "composite '{}'", "decomposition", name)
    return list(jaxpr.out_avals)


def_typing(composite_p, _composite_rule)
