"""``custom_vmap_call``: a function carried as a jaxpr (``call``) with the user's rule for
batching it (``jax.custom_batching.custom_vmap``); ``in_tree``/``out_tree`` are the
pytrees the rule sees, the first input subtree being the traced constants."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_call_operands

custom_vmap_p = Primitive("custom_vmap_call", multiple_results=True)


def _custom_vmap_rule(*avals, call, rule, in_tree, out_tree):
    check_call_operands(avals, call.in_avals, "custom_vmap_call", "call")
    return list(call.out_avals)


def_typing(custom_vmap_p, _custom_vmap_rule)
