"""Eager evaluation: the bottom of the trace stack runs primitives right away."""
from __future__ import annotations

from traxla.ir.jaxpr import Literal
from traxla.ir.traceback_util import filter_exception, register_boundary
from traxla.tracer.traces import Trace, Tracer


def apply_primitive(prim, args, params):
    """Runs one primitive on concrete operands: ``traxla.runtime`` installs its eager
    dispatcher here when it loads (the tracer does not import the runtime above it)."""
    raise RuntimeError("traxla.runtime is not loaded: import traxla before evaluating primitives")


class EvalTrace(Trace):
    def process_primitive(self, prim, args, params):
        try:  # eager primitive application: a boundary of traceback filtering
            for a in args:
                if isinstance(a, Tracer):
                    raise a._trace.leak_error(a) if not a._trace.alive else TypeError(
                        f"{prim.name} got a tracer of a trace that is not the current one: "
                        f"{a!r}")
            if prim.impl is not None:  # a primitive defined from user code with def_impl
                return prim.impl(*[a.val if type(a) is Literal else a for a in args], **params)
            return apply_primitive(prim, args, params)
        except Exception as e:
            filter_exception(e)
            raise


def leak_error_fallback(tracer):  # pragma: no cover - used by traces without messages
    return TypeError(f"unexpected tracer {tracer!r}")


EvalTrace.leak_error = staticmethod(leak_error_fallback)
register_boundary(EvalTrace.process_primitive)
