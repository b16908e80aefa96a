"""The ``jit`` primitive: a call of a closed jaxpr, shown as ``jit[name=... jaxpr=...]``."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_call_operands
from traxla.ir.jaxpr_printer import pp_eqn_generic, pp_eqn_rules

jit_p = Primitive("jit", multiple_results=True)


def _jit_rule(*avals, jaxpr, name):
    check_call_operands(avals, jaxpr.in_avals, "jit[name={}]", "jaxpr", name)
    return list(jaxpr.out_avals)


def _jit_pp(eqn, ctx):
    inner = eqn.params["jaxpr"].jaxpr
    if inner not in ctx.shared_jaxprs:
        ctx.suggest_same_names(inner.invars, eqn.invars)
        ctx.suggest_same_names(inner.outvars, eqn.outvars)
    params = [("name", eqn.params["name"])]
    params += [(k, eqn.params[k]) for k in sorted(eqn.params) if k != "name"]
    return pp_eqn_generic(eqn, ctx, params)


def_typing(jit_p, _jit_rule)
pp_eqn_rules[jit_p] = _jit_pp
