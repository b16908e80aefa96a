"""Checks a jaxpr: every variable defined before use, and every equation's
binders agree with its typing rule re-run on its operands."""
from __future__ import annotations

from traxla.errors import JaxprTypeError
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Literal, subjaxprs
from traxla.ir.primitive import typing_rules
from traxla.ir.sharding_rules import infer_avals


def _same_type(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def check_jaxpr(jaxpr) -> None:
    if isinstance(jaxpr, ClosedJaxpr):
        if len(jaxpr.consts) != len(jaxpr.jaxpr.constvars):
            raise JaxprTypeError("closed jaxpr has a different number of consts and constvars")
        jaxpr = jaxpr.jaxpr
    defined = set()
    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        if v in defined:
            raise JaxprTypeError(f"variable {v} bound twice")
        defined.add(v)

    def read(x, where):
        if isinstance(x, Literal):
            return x.aval
        if x not in defined:
            raise JaxprTypeError(f"variable {x} used before definition in {where}")
        return x.aval

    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i} ({eqn.primitive.name})"
        in_avals = [read(x, where) for x in eqn.invars]
        if eqn.primitive not in typing_rules:
            raise JaxprTypeError(f"no typing rule for primitive {eqn.primitive.name}")
        try:
            out = infer_avals(eqn.primitive, in_avals, eqn.params)
        except (TypeError, ValueError) as e:
            raise JaxprTypeError(f"{where} is ill-typed: {e}") from e
        out = out if eqn.primitive.multiple_results else [out]
        if len(out) != len(eqn.outvars) or not all(
                _same_type(o, v.aval) for o, v in zip(out, eqn.outvars)):
            raise JaxprTypeError(
                f"{where}: binders {[v.aval.str_short() for v in eqn.outvars]} disagree with the "
                f"typing rule's {[o.str_short() for o in out]}")
        for sub in subjaxprs(eqn.params):
            check_jaxpr(sub)
        defined.update(eqn.outvars)
    for v in jaxpr.outvars:
        read(v, "the outputs")


__all__ = ["check_jaxpr", "Jaxpr"]
