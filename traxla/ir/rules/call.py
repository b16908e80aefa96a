"""The ``jit`` primitive: a call of a closed jaxpr, shown as ``jit[name=... jaxpr=...]``;
and JAX's older call primitives ``call`` and ``closed_call``."""
from __future__ import annotations

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.primitive import ALL_PRIMITIVES, Primitive, def_typing
from traxla.ir.rules._util import check_call_operands
from traxla.ir.jaxpr_printer import pp_eqn_generic, pp_eqn_rules

class JitPrimitive(Primitive):
    """``jit``: traxla's equations carry ``jaxpr`` and ``name``. ``bind`` also takes the
    params of JAX's equations (``in_shardings``, ``donated_invars``, ``inline``...) where
    they ask for nothing traxla's ``jit`` equation would not do (unspecified shardings and
    layouts, no donation, no compiler options), so JAX-style code binding ``jit_p`` by hand
    runs; ``inline=True`` evaluates the jaxpr in place, as JAX's. Anything else raises."""

    __slots__ = ()
    _inline_hook: list = [None]  # eval_jaxpr, installed by tracer/call_primitives.py

    def __init__(self):
        super().__init__("jit", multiple_results=True)
        ALL_PRIMITIVES["jit"] = self

    def bind(self, /, *args, **params):
        if len(params) > 2:
            params = _traxla_jit_params(params)
            if params.pop("inline", False):
                return JitPrimitive._inline_hook[0](params["jaxpr"], (), *args)
        return Primitive.bind(self, *args, **params)


def _no_constraint(x) -> bool:
    return x is None or type(x).__name__ == "UnspecifiedValue"


def _traxla_jit_params(params: dict) -> dict:
    """JAX's jit equation params as traxla's (``jaxpr``, ``name``, and ``inline``)."""
    params = dict(params)
    out = {"jaxpr": params.pop("jaxpr"), "name": params.pop("name", "jit")}
    out["inline"] = bool(params.pop("inline", False))
    params.pop("keep_unused", None)  # (traxla's jit equations keep every operand)
    refused = []
    for key in ("in_shardings", "out_shardings", "in_layouts", "out_layouts"):
        if not all(_no_constraint(x) for x in params.pop(key, ())):
            refused.append(key)
    if any(params.pop("donated_invars", ())):
        refused.append("donated_invars")
    if params.pop("compiler_options_kvs", ()):
        refused.append("compiler_options_kvs")
    mesh = params.pop("ctx_mesh", None)
    if mesh is not None and not getattr(mesh, "empty", True):
        refused.append("ctx_mesh")
    refused += sorted(params)
    if refused:
        raise NotImplementedError(
            f"jit_p.bind with {', '.join(refused)}: traxla's jit equations carry only "
            "'jaxpr' and 'name' (shardings, layouts, donation and compiler options are set "
            "on jit(...) itself)")
    return out


jit_p = JitPrimitive()


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


class CallPrimitive(Primitive):
    """JAX's call primitives, ``call`` and ``closed_call``: an equation calling its
    ``call_jaxpr`` param (an open ``Jaxpr`` for ``call``, a ``ClosedJaxpr`` for
    ``closed_call``) on its operands. ``bind(*args, subfuns=(f,))`` calls the ``WrappedFun``
    ``f``: outside any transformation it just runs, under one it is traced and staged as
    one equation (``tracer/call_primitives.py`` installs that, and ``get_bind_params``,
    which turns an equation's jaxpr back into ``subfuns``)."""

    __slots__ = ("impl",)
    call_primitive = True
    _hooks: list = [None, None]  # [bind_with_subfuns(prim, args, params), get_bind_params]

    def __init__(self, name: str):
        super().__init__(name, multiple_results=True)
        ALL_PRIMITIVES[name] = self  # one of traxla's own primitives
        self.impl = None

    def bind(self, /, *args, **params):
        if "subfuns" in params:
            return CallPrimitive._hooks[0](self, args, params)
        return Primitive.bind(self, *args, **params)

    def get_bind_params(self, params):
        return CallPrimitive._hooks[1](self, params)


class ClosedCallPrimitive(CallPrimitive):
    """``closed_call``: its ``call_jaxpr`` is a ClosedJaxpr."""

    __slots__ = ()


call_p = CallPrimitive("call")
closed_call_p = ClosedCallPrimitive("closed_call")


def _call_rule(*avals, call_jaxpr, **params):
    if not isinstance(call_jaxpr, Jaxpr) or call_jaxpr.constvars:
        raise TypeError(f"call: call_jaxpr must be a Jaxpr without constvars, got "
                        f"{type(call_jaxpr).__name__}")
    check_call_operands(avals, call_jaxpr.in_avals, "call", "call_jaxpr")
    return list(call_jaxpr.out_avals)


def _closed_call_rule(*avals, call_jaxpr, **params):
    if not isinstance(call_jaxpr, ClosedJaxpr):
        raise TypeError(f"closed_call: call_jaxpr must be a ClosedJaxpr, got "
                        f"{type(call_jaxpr).__name__}")
    check_call_operands(avals, call_jaxpr.in_avals, "closed_call", "call_jaxpr")
    return list(call_jaxpr.out_avals)


def_typing(call_p, _call_rule)
def_typing(closed_call_p, _closed_call_rule)
