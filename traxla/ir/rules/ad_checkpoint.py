"""``checkpoint``/``remat``: the ``remat2`` primitive (an open jaxpr called with a
rematerialization policy) and ``name`` (``checkpoint_name``'s identity that policies
look at), as JAX 0.10.2 defines them in ``ad_checkpoint``."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_call_operands

remat_p = Primitive("remat2", multiple_results=True)
name_p = Primitive("name")


def _remat_rule(*avals, jaxpr, prevent_cse, differentiated, policy):
    if jaxpr.constvars:
        raise TypeError("remat2's jaxpr must take its constants as operands (it has "
                        f"{len(jaxpr.constvars)} constvars).")
    check_call_operands(avals, [v.aval for v in jaxpr.invars], "remat2", "jaxpr")
    if not isinstance(prevent_cse, bool) and len(prevent_cse) != len(avals):
        raise TypeError(f"remat2's prevent_cse has {len(prevent_cse)} entries for "
                        f"{len(avals)} operands.")
    return [v.aval for v in jaxpr.outvars]


def _name_rule(x, *, name):
    return x


def_typing(remat_p, _remat_rule)
def_typing(name_p, _name_rule)
