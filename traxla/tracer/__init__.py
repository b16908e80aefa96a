"""Tracing: tracers, the trace stack and staging a Python function into a jaxpr.
Imports ``ir/``, and ``runtime/`` for eager evaluation."""
from . import core
from .core import Trace, Tracer, bind, current_trace, set_current_trace
from .eval import EvalTrace
from .staging import (DynamicJaxprTrace, DynamicJaxprTracer, make_debug_info,
                      trace_to_jaxpr)
from .values import concrete_aval, concrete_value, is_concrete

core.set_bottom_trace(EvalTrace())

__all__ = ["Trace", "Tracer", "bind", "current_trace", "set_current_trace", "EvalTrace",
           "DynamicJaxprTrace", "DynamicJaxprTracer", "make_debug_info", "trace_to_jaxpr",
           "concrete_aval", "concrete_value", "is_concrete"]
