"""``traxla.extend.core``: jaxprs and primitives as ``jax.extend.core`` exposes them.

A ``Primitive`` made here is an ordinary traxla primitive: ``def_impl`` gives its eager
evaluation, ``def_abstract_eval`` its typing rule; lowering, JVP, transpose and batching
rules are registered through ``traxla.interpreters``."""
from __future__ import annotations

import collections.abc as _abc
import weakref

import numpy as np

from traxla.ir import primitive as _primitive
from traxla.ir.effects import Effect  # noqa: F401
from traxla.ir.jaxpr import DebugInfo, DropVar, subjaxprs  # noqa: F401
from traxla.errors import InconclusiveDimensionOperation, JaxprTypeError  # noqa: F401
from traxla.tracer import traces as _traces
from traxla.tracer.staging import DynamicJaxprTrace
from traxla.ir.avals import ShapedArray  # noqa: F401  (what abstract-eval rules return)
from traxla.ir.checker import check_jaxpr  # noqa: F401
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var  # noqa: F401
from traxla.ir.primitive import ALL_PRIMITIVES, typing_rules
from traxla.tracer.interpret import eval_jaxpr, jaxpr_as_fun  # noqa: F401
from traxla.tracer.traces import current_trace  # noqa: F401
from traxla.errors import ConcretizationTypeError
from traxla.tracer import Tracer
from traxla.api_util import shaped_abstractify
from traxla.ir import dtypes as _dtypes
from traxla.ir.rules.call import CallPrimitive  # noqa: F401
from traxla.ir.rules.tokens import AbstractToken  # noqa: F401
from traxla.ir.thread_state import axis_env as _axis_env
from traxla.runtime.array import Token  # noqa: F401

array_types = {ShapedArray}


USER_PRIMITIVES: dict = {}


class _PrimitiveType(type):
    """Every primitive is a ``jax.extend.core.Primitive``, as in JAX, where that is the base
    class of them all (``isinstance(lax.add_p, Primitive)``): traxla's own are instances of
    the base ``traxla.ir.primitive.Primitive``, which this class extends."""

    def __instancecheck__(cls, obj):
        if cls is Primitive:
            return isinstance(obj, _primitive.Primitive)
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub):
        if cls is Primitive:
            return isinstance(sub, type) and issubclass(sub, _primitive.Primitive)
        return super().__subclasscheck__(sub)


class Primitive(_primitive.Primitive, metaclass=_PrimitiveType):
    """A primitive defined from user code: ``p = Primitive('name')``, then
    ``p.def_impl(fn)``, ``p.def_abstract_eval(fn)`` and ``p.bind(*args, **params)``."""

    __slots__ = ("impl", "_abstract_eval")

    def __init__(self, name: str, multiple_results: bool = False):
        super().__init__(name, multiple_results)
        USER_PRIMITIVES[name] = self  # kept apart from traxla's own (coverage, name lookups)
        self.impl = None
        self._abstract_eval = None

    def def_impl(self, impl):
        """``impl(*args, **params)``: how ``bind`` evaluates outside any transformation."""
        self.impl = impl
        return impl

    def def_abstract_eval(self, abstract_eval):
        """``abstract_eval(*avals, **params)`` returns the output aval(s) (ShapedArray)."""
        self._abstract_eval = abstract_eval
        name = self.name

        def rule(*avals, **params):
            out = abstract_eval(*avals, **params)
            outs = out if self.multiple_results else [out]
            for o in outs:
                if not (hasattr(o, "shape") and hasattr(o, "dtype")):
                    raise TypeError(f"The abstract evaluation rule of primitive '{name}' returned "
                                    f"{o!r}; it must return a ShapedArray (or a list of them "
                                    "for multiple_results=True).")
            outs = [ShapedArray(o.shape, o.dtype, getattr(o, "weak_type", False)) for o in outs]
            return outs if self.multiple_results else outs[0]
        typing_rules[self] = rule
        return abstract_eval

    def def_effectful_abstract_eval(self, effectful_abstract_eval):
        """JAX's form returning ``(avals, effects)``; only effect-free rules are accepted."""
        def abstract_eval(*avals, **params):
            out, effects = effectful_abstract_eval(*avals, **params)
            if effects:
                raise NotImplementedError(f"primitive '{self.name}' declares effects {effects}; "
                                          "user primitives with effects are not supported.")
            return out
        return self.def_abstract_eval(abstract_eval)


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None):
    return JaxprEqn(list(invars), list(outvars), primitive, dict(params), source_info)


class OpaqueTraceState:
    """The current trace, compared by identity and never kept alive (JAX's): libraries
    (flax) record it and later check that they are still under the same transformation."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace_ref):
        self._trace_ref = trace_ref

    def __eq__(self, other):
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self):
        return hash(self._trace_ref)

    def __repr__(self):
        trace = self._trace_ref()
        return f"OpaqueTraceState({type(trace).__name__ if trace is not None else 'dead'})"


def get_opaque_trace_state(convention=None):
    """An ``OpaqueTraceState`` of the calling thread's current trace."""
    del convention
    return OpaqueTraceState(weakref.ref(_traces.current_trace()))


def find_top_trace(xs):
    """The innermost active trace (JAX's ``core.find_top_trace``: traces are per thread,
    and the current one is the top whatever the arguments)."""
    del xs
    return _traces.current_trace()


unsafe_get_current_trace = _traces.current_trace


class TakeCurrentTraceContextManager:
    """``with take_current_trace() as trace``: the current trace, with the eager trace
    current inside the block (JAX's class of that name)."""
    __slots__ = ("_ctx",)

    def __enter__(self):
        trace = _traces.current_trace()
        self._ctx = _traces.set_current_trace(_traces._bottom[0])
        self._ctx.__enter__()
        return trace

    def __exit__(self, exc_type, exc_value, traceback):
        return self._ctx.__exit__(exc_type, exc_value, traceback)


take_current_trace = TakeCurrentTraceContextManager


set_current_trace = _traces.set_current_trace


def unsafe_am_i_under_a_jit() -> bool:
    return unsafe_am_i_under_a_jit_DO_NOT_USE()


def concrete_or_error(force, val, context=""):
    """``force(val)`` for a concrete value; JAX's ConcretizationTypeError for a tracer."""
    if force is None:
        force = lambda x: x  # noqa: E731
    if isinstance(val, Tracer):
        concrete = val.to_concrete_value()
        if concrete is None:
            raise ConcretizationTypeError(
                f"Abstract tracer value encountered where concrete value is expected: "
                f"{val._error_repr()}\n{context}")
        return force(concrete)
    return force(val)


def valid_jaxtype(x) -> bool:
    """Whether ``x`` is a value JAX can trace (an array, a scalar, a tracer)."""
    try:
        shaped_abstractify(x)
    except TypeError:
        return False
    return True


def primal_dtype_to_tangent_dtype(primal_dtype):
    dt = np.dtype(primal_dtype) if not _dtypes.is_extended(primal_dtype) else primal_dtype
    if _dtypes.is_extended(dt) or not np.issubdtype(dt, np.inexact):
        return _dtypes.float0
    return dt


def mapped_aval(size, axis, aval):
    """``aval`` with its mapped axis ``axis`` (of length ``size``) removed; None: unmapped."""
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no mapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has not size {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """``aval`` with a new axis of length ``size`` inserted at ``axis``; None: unmapped."""
    del explicit_mesh_axis
    if not isinstance(aval, ShapedArray):
        raise TypeError(f"no unmapping handler for {aval} of type {type(aval)}")
    if axis is None:
        return aval
    if type(axis) is not int:
        raise TypeError(axis)
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def jaxprs_in_params(params) -> list:
    return [j.jaxpr if isinstance(j, ClosedJaxpr) else j for j in subjaxprs(params)]


no_effects: frozenset = frozenset()
Effects = _abc.Set[Effect]  # JAX's: the type of a set of effects (a jaxpr's is a frozenset)


def _trace_stack():
    """The current trace and its parents, outermost first (JAX's unsafe_get_trace_stack)."""
    stack, trace = [], _traces.current_trace()
    while trace is not None:
        stack.append(trace)
        trace = getattr(trace, "parent", None) or getattr(trace, "parent_trace", None)
    return stack[::-1]


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:
    """Whether a jit (a staging trace) is anywhere in the current trace stack."""
    return any(isinstance(t, DynamicJaxprTrace) for t in _trace_stack())


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:
    """Whether a vmap (a batching trace) is anywhere in the current trace stack."""
    from traxla.batching.batch_trace import BatchTrace
    return any(isinstance(t, BatchTrace) for t in _trace_stack())


def unsafe_get_axis_names_DO_NOT_USE() -> list:
    """The named axes in scope (of named vmaps and shard_maps), outermost first."""
    return [n for frame in _axis_env for n in frame.axis_names]


def nonempty_axis_env_DO_NOT_USE() -> bool:
    return bool(unsafe_get_axis_names_DO_NOT_USE())


class TraceTag:
    """JAX's tag of a transformation's traces: all tags are equal (JAX's ``lu.cache``
    relies on it)."""

    def __hash__(self):
        return hash(TraceTag)

    def __eq__(self, other):
        return isinstance(other, TraceTag)


def gensym():
    """A maker of fresh variables: ``gensym()(aval)`` is a new ``Var`` (as JAX's)."""
    return Var


def call_impl(f, *args, **params):
    """JAX's eager implementation of a call primitive: ``f.call_wrapped(*args)``."""
    del params  # params parameterize the call primitive, not the function
    return f.call_wrapped(*args)


def __getattr__(name):
    # ``primitives`` (the module, as JAX's) imports all of traxla: loaded on first use,
    # since this module is imported while traxla itself is
    if name == "primitives":
        import importlib
        return importlib.import_module("traxla.extend.core.primitives")
    raise AttributeError(f"module 'traxla.extend.core' has no attribute {name!r}")


__all__ = ["AbstractToken", "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect",
           "Effects", "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError",
           "Literal", "OpaqueTraceState", "Primitive", "ShapedArray", "Token", "TraceTag", "Var",
           "array_types", "call_impl", "check_jaxpr", "concrete_or_error", "eval_jaxpr",
           "find_top_trace", "gensym", "get_opaque_trace_state", "jaxpr_as_fun",
           "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
           "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "set_current_trace",
           "subjaxprs", "take_current_trace", "unmapped_aval", "unsafe_am_i_under_a_jit",
           "unsafe_am_i_under_a_jit_DO_NOT_USE", "unsafe_am_i_under_a_vmap_DO_NOT_USE",
           "unsafe_get_axis_names_DO_NOT_USE", "unsafe_get_current_trace", "valid_jaxtype"]
