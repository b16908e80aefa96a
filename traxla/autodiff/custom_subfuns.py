"""A ``custom_jvp_call`` equation back as functions, as JAX's ``get_bind_params`` gives them.

JAX's ``custom_jvp_call_p.get_bind_params(eqn.params)`` replaces the equation's jaxpr and
rule by ``subfuns=(fun, jvp)``, two ``WrappedFun``s, and ``custom_jvp_call_p.bind(*args,
subfuns=(fun, jvp), **rest)`` applies them again: interpreters that re-run a jaxpr equation
by equation (equinox's ``finalise_jaxpr``) go through this pair. ``fun`` takes every operand
of the equation (its consts first); ``jvp`` takes those operands then their tangents and
returns the outputs then theirs, a zero tangent being a ``SymbolicZero`` either way (JAX's
``lift_jvp``; the consts' tangents are dropped)."""
from __future__ import annotations

from traxla import primitives as prims
from traxla.autodiff.ad import Zero, has_float0_tangent, instantiate, tangent_aval
from traxla.autodiff.symbolic_zeros import SymbolicZero
from traxla.ir.literals import float0_zeros
from traxla.ir.primitive import ALL_PRIMITIVES, Primitive
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.linear_util import wrap_init


class CustomJVPCallPrimitive(Primitive):
    """``custom_jvp_call``: its equations' params as JAX's ``get_bind_params`` gives them,
    and ``bind`` taking them back (``subfuns``)."""

    __slots__ = ()

    def __init__(self, name: str):
        super().__init__(name, multiple_results=True)
        ALL_PRIMITIVES[name] = self  # one of traxla's own primitives

    def get_bind_params(self, params):
        new = dict(params)
        call_jaxpr = new.pop("call_jaxpr")
        num_consts = new.pop("num_consts")
        rule = new.pop("jvp")

        def fun(*xs):
            return eval_jaxpr(call_jaxpr, (), *xs)
        fun.__name__ = new.pop("name", None) or "fun"  # (bind names the equation by it)
        fun = wrap_init(fun, debug_info=call_jaxpr.jaxpr.debug_info)
        # (the rule takes its lifted nondiff operands: only the closed-over consts are cut)
        new["subfuns"] = (fun, _lift_jvp(num_consts - getattr(rule, "num_lifted", 0), rule,
                                         call_jaxpr.jaxpr.debug_info))
        return new

    def bind(self, /, *args, **params):
        if "subfuns" not in params:
            return Primitive.bind(self, *args, **params)
        from traxla.autodiff.custom import bind_with_subfuns
        params = dict(params)
        fun, jvp = params.pop("subfuns")
        return bind_with_subfuns(fun, jvp, args, **params)



def _lift_jvp(num_consts, rule, debug_info):
    """``rule`` (traxla's: ``rule(primals, tangents) -> (outs, tangent outs)``, a float0
    tangent as ``None``, zeros as ``Zero`` for a symbolic-zeros rule) in JAX's convention."""
    symbolic = getattr(rule, "symbolic_zeros", False)

    def jvp(*xs):
        n, ragged = divmod(len(xs), 2)
        if ragged:
            raise TypeError(f"a custom_jvp rule takes as many tangents as primals; got "
                            f"{len(xs)} arguments")
        primals, tangents = list(xs[num_consts:n]), xs[n + num_consts:]
        ts = [None if has_float0_tangent(p) else t if type(t) is not SymbolicZero
              else Zero(t.aval) if symbolic else instantiate(Zero(t.aval))
              for p, t in zip(primals, tangents)]
        outs, touts = rule(primals, ts)
        return [*outs, *[SymbolicZero(t.aval) if type(t) is Zero
                         else SymbolicZero(tangent_aval(prims.aval_of(o))) if t is None else t
                         for o, t in zip(outs, touts)]]
    jvp.__name__ = str(rule)
    return wrap_init(jvp, debug_info=debug_info)


def rule_of_lifted(jvp):
    """The inverse: a JAX-convention ``jvp`` (a ``WrappedFun``) as traxla's rule function."""
    def rule(primals, tangents):
        ts = [float0_zeros(prims.shape_of(p)) if t is None
              else SymbolicZero(t.aval) if type(t) is Zero else t
              for p, t in zip(primals, tangents)]
        out = list(jvp.call_wrapped(*primals, *ts))
        n = len(out) // 2
        return out[:n], [Zero(t.aval) if type(t) is SymbolicZero else t for t in out[n:]]
    return rule


__all__ = ["CustomJVPCallPrimitive", "rule_of_lifted"]
