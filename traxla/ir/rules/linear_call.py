"""``linear_call``: a function linear in its last operands, carried as a jaxpr
(``callee``) with a thunk giving its transpose (``custom_derivatives.linear_call``)."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_call_operands

linear_call_p = Primitive("linear_call", multiple_results=True)


def _linear_call_rule(*avals, callee, transpose_thunk, num_callee_consts, num_res):
    return check_call_operands(avals, callee, "linear_call", "callee")


def_typing(linear_call_p, _linear_call_rule)
