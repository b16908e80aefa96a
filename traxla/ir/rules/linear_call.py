"""``linear_call``: a function linear in its last operands, carried as a jaxpr
(``callee``) with a thunk giving its transpose (``custom_derivatives.linear_call``)."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing

linear_call_p = Primitive("linear_call", multiple_results=True)


def _linear_call_rule(*avals, callee, transpose_thunk, num_callee_consts, num_res):
    expected = callee.in_avals
    if len(avals) != len(expected) or any(
            a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
        raise TypeError(f"linear_call called with {[a.str_short() for a in avals]} but its "
                        f"callee takes {[e.str_short() for e in expected]}.")
    return list(callee.out_avals)


def_typing(linear_call_p, _linear_call_rule)
