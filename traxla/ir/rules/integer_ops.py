"""Integer operations of ``lax`` beyond the elementwise family: ``mulhi`` (the high half
of the double-width product) and ``reduce_xor``."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import INT, INT_BOOL
from traxla.ir.rules.elementwise import _binary_rule
from traxla.ir.rules.reduction import _reduce_rule

mulhi_p = def_typing(Primitive("mulhi"), _binary_rule("mulhi", INT))
reduce_xor_p = def_typing(Primitive("reduce_xor"), _reduce_rule("reduce_xor", INT_BOOL))


def _reduce_xor_printing(params):
    return [("axes", params["axes"])]


from traxla.ir.jaxpr_printer import pp_param_rules  # noqa: E402

pp_param_rules[reduce_xor_p] = _reduce_xor_printing
