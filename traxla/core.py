"""``traxla.core``: the names JAX 0.10.2 still exports from ``jax.core`` (``Tracer``,
``ShapedArray``, ``Trace``, ``eval_jaxpr``, ...), and the deprecated ones it still serves
(``find_top_trace``, ``get_opaque_trace_state``, ``Jaxpr``, ...). Names JAX removed raise
AttributeError with JAX's message."""
from __future__ import annotations

import typing
from typing import Any

from traxla.api.config_contexts import ensure_compile_time_eval
from traxla.extend.core import (ClosedJaxpr, DebugInfo, DropVar, Effect, Effects,  # noqa: F401
                                InconclusiveDimensionOperation, Jaxpr, JaxprEqn,
                                JaxprTypeError, Literal, Primitive, Var, check_jaxpr,
                                concrete_or_error, find_top_trace, get_opaque_trace_state,
                                jaxprs_in_params, new_jaxpr_eqn, no_effects,
                                primal_dtype_to_tangent_dtype, valid_jaxtype)
from traxla.ir.avals import ShapedArray
from traxla.tracer import Tracer
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.traces import Trace
from traxla.tracer.values import is_concrete  # noqa: F401

AbstractValue = ShapedArray  # traxla's one kind of abstract value
Atom = typing.Union[Var, Literal]
ParamDict = dict[str, Any]
Value = Any
eval_context = ensure_compile_time_eval


from traxla.ir.shape_poly import max_dim, min_dim  # noqa: E402,F401  (JAX's core.max_dim)


def is_constant_dim(d) -> bool:
    return isinstance(d, int)


def is_constant_shape(s) -> bool:
    return all(is_constant_dim(d) for d in s)


_REMOVED = {
    "get_aval": "jax.core.get_aval was deprecated in JAX v0.8.2 and removed in JAX v0.10.0;"
                " use jax.typeof instead.",
    "mapped_aval": "jax.core.mapped_aval was deprecated in JAX v0.8.2 and removed in JAX"
                   " v0.10.0. Use jax.extend.core.mapped_aval.",
    "unmapped_aval": "jax.core.unmapped_aval was deprecated in JAX v0.8.2 and removed in JAX"
                     " v0.10.0. Use jax.extend.core.unmapped_aval.",
    "set_current_trace": "jax.core.set_current_trace was deprecated in JAX v0.8.2 and removed"
                         " in JAX v0.10.0. Use jax.extend.core.set_current_trace.",
    "take_current_trace": "jax.core.take_current_trace was deprecated in JAX v0.8.2 and"
                          " removed in JAX v0.10.0. Use jax.extend.core.take_current_trace.",
    "TraceTag": "jax.core.TraceTag was deprecated in JAX v0.8.2 and removed in JAX v0.10.0."
                " Use jax.extend.core.TraceTag.",
}


def __getattr__(name):
    if name == "pytype_aval_mappings":  # deprecated in JAX, still served (tfp registers)
        import warnings
        warnings.warn("jax.core.pytype_aval_mappings is deprecated.", DeprecationWarning,
                      stacklevel=2)
        from traxla.ir.pytype_registry import pytype_aval_mappings
        return pytype_aval_mappings
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module 'jax.core' has no attribute '{name}'")


__all__ = ["AbstractValue", "Atom", "ParamDict", "ShapedArray", "Trace", "Tracer", "Value",
           "ensure_compile_time_eval", "eval_context", "eval_jaxpr", "max_dim", "min_dim"]
