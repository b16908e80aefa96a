"""Tracing: tracers, the trace stack and staging a Python function into a jaxpr.
Imports ``ir/``, and ``runtime/`` for eager evaluation."""
from traxla.tracer import traces as core
from traxla.tracer.traces import Trace, Tracer, bind, current_trace, set_current_trace
from traxla.tracer.eval import EvalTrace
from traxla.tracer.staging import (DynamicJaxprTrace, DynamicJaxprTracer, make_debug_info,
                      trace_to_jaxpr)
from traxla.tracer.values import concrete_aval, concrete_value, is_concrete
from traxla.tracer import call_primitives  # noqa: F401,E402  (binds call/closed_call with subfuns)

core.set_bottom_trace(EvalTrace())

__all__ = ["Trace", "Tracer", "bind", "current_trace", "set_current_trace", "EvalTrace",
           "DynamicJaxprTrace", "DynamicJaxprTracer", "make_debug_info", "trace_to_jaxpr",
           "concrete_aval", "concrete_value", "is_concrete"]
