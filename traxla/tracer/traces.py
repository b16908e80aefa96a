"""Tracers, traces and ``bind``.

The current trace is a per-thread value swapped by ``set_current_trace`` (the
"stackless" design): ``bind`` hands a primitive to the current trace, which
lifts foreign operands (constants, tracers of enclosing traces) itself. A
tracer whose trace has finished is dead, and using it raises
``UnexpectedTracerError``.
"""
from __future__ import annotations

import contextlib
import operator
import os
import sys
import threading

import numpy as np

from traxla.errors import (ConcretizationTypeError, TracerArrayConversionError,
                      TracerBoolConversionError, TracerIntegerConversionError,
                      UnexpectedTracerError)
from traxla.ir.jaxpr import SourceInfo, name_stack as _name_stack
from traxla.ir.primitive import set_bind_hook
from traxla.ir.thread_state import unusual as _unusual

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# traxla's own demo programs (the main job, ``python -m traxla scan-vs-unrolled``) are user
# code: their equations are located at their own lines, as a user's would be.
_DEMO_FILES = frozenset(_PACKAGE_DIR + f for f in ("__main__.py", os.path.join("cli", "bench.py")))


class _InternalFiles(dict):
    """filename -> whether frames of that file are skipped when looking for the user's frame:
    traxla's own files (its demos aside), and Python's module runners (``<frozen runpy>``,
    ``runpy.py``) and frozen import machinery, which are never where a user wrote code
    (``python -m``, notebooks and scripts reach user code through them)."""

    def __missing__(self, filename: str) -> bool:
        internal = ((filename.startswith(_PACKAGE_DIR) and filename not in _DEMO_FILES)
                    or filename.startswith(_excluded_prefixes[0])
                    or filename.startswith("<frozen ")
                    or filename.endswith(os.sep + "runpy.py"))
        self[filename] = internal
        return internal


# Path prefixes libraries registered as never the user's (``register_exclusion``).
_excluded_prefixes = [()]
_internal_files = _InternalFiles()


def user_frame(frame):
    """The innermost frame at or above ``frame`` that is user code (None if there is none)."""
    internal = _internal_files
    while frame is not None and internal[frame.f_code.co_filename]:
        frame = frame.f_back
    return frame


_source_override = [None]


@contextlib.contextmanager
def source_info_context(info):
    """Equations recorded inside take ``info`` as their source (re-evaluating a jaxpr
    keeps each equation's origin, as JAX's ``user_context``)."""
    previous = _source_override[0]
    _source_override[0] = info
    try:
        yield
    finally:
        _source_override[0] = previous


def register_exclusion(path: str) -> None:
    """Frames from files under ``path`` are skipped when finding the user's source line
    (``jax.extend.source_info_util.register_exclusion``, for libraries' own frames)."""
    if path not in _excluded_prefixes[0]:
        _excluded_prefixes[0] = _excluded_prefixes[0] + (path,)
        _internal_files.clear()


def user_source_info(depth: int = 2, _getframe=sys._getframe, _internal=_internal_files):
    """The innermost frame outside traxla, looking from ``depth`` frames up (the caller's
    caller): where the user's code made the call.

    Runs once per traced equation: each traxla frame between the caller and the user's
    code costs one step of the walk, and the line number is left for ``SourceInfo`` to
    work out when something prints it."""
    override = _source_override[0]
    if override is not None:
        return override
    frame = _getframe(depth)
    try:
        while _internal[frame.f_code.co_filename]:
            frame = frame.f_back
    except AttributeError:  # ran off the bottom of the stack: traxla's own code all the way
        return None
    # One SourceInfo per call site (an unrolled loop records the same few thousands of
    # times). Keyed by the code's identity: the cached SourceInfo keeps the code alive.
    code, scopes = frame.f_code, _name_stack.scopes
    key = (id(code), frame.f_lasti, scopes)
    try:
        info = _call_sites.get(key)
    except TypeError:  # an unhashable scope name
        return SourceInfo(code, key[1], None, scopes)
    if info is None:
        if len(_call_sites) >= 4096:
            _call_sites.clear()
        info = _call_sites[key] = SourceInfo(code, key[1], None, scopes)
    return info


_call_sites: dict = {}


class Trace:
    """An interpreter for primitives. Subclasses: EvalTrace, DynamicJaxprTrace."""

    alive = True
    # whether high-level (hijax) primitives bound here lower to their arrays at once (JAX's
    # ``requires_low``): only a trace that lowers a staged hijax jaxpr says so; eagerly,
    # their ``impl`` lowers them anyway
    requires_low = False

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    def invalidate(self):
        self.alive = False

    @property
    def main(self):
        """What identifies this transformation (JAX's deprecated ``Trace.main``, its tag):
        a tracer ``t`` belongs to it when ``t._trace.main is trace.main``."""
        return self


class Tracer:
    """A stand-in value recorded by a trace. Operators are installed by traxla.numpy."""

    __slots__ = ("_trace", "__weakref__")  # weakly referable, as JAX's tracers (keras keys masks on them)
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    # -- requests for concrete values: refused with JAX's messages ----------
    def _error_repr(self) -> str:
        return f"traced array with shape {self.aval.str_short(short_dtypes=False)}"

    def _origin_msg(self) -> str:
        return ""

    @property
    def sharding(self):  # an Array attribute only concrete arrays have (hasattr() is False)
        raise AttributeError(
            f"The 'sharding' attribute is not available on {self._error_repr()}. "
            "To query sharding information on tracers, use `jax.typeof(x)`.")

    def to_concrete_value(self):
        """The concrete value behind this tracer, or None. A JVP tracer whose primal is
        concrete has one, so Python control flow works under grad/jvp outside jit."""
        return None

    def __bool__(self):
        self._check_alive()
        value = self.to_concrete_value()
        if value is not None:
            return bool(value)
        _check_bool_conversion(self.aval)
        raise TracerBoolConversionError(
            f"Attempted boolean conversion of {self._error_repr()}.{self._origin_msg()}")

    def __index__(self):
        self._check_alive()
        value = self.to_concrete_value()
        if value is not None:
            return operator.index(value)
        _check_integer_conversion(self.aval)
        raise TracerIntegerConversionError(
            f"The __index__() method was called on {self._error_repr()}{self._origin_msg()}\n"
            f"{INDEX_HINT}")

    def __array__(self, dtype=None, copy=None):
        self._check_alive()
        raise TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on "
            f"{self._error_repr()}{self._origin_msg()}")

    def _concretization_error(self, fn_name: str, hint: str):
        self._check_alive()
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{self._error_repr()}\nThe problem arose with the `{fn_name}` function. {hint}"
            f"{self._origin_msg()}\n")

    def __int__(self):
        self._check_alive()
        value = self.to_concrete_value()
        if value is not None:
            return int(value)
        _check_scalar_conversion(self.aval)
        self._concretization_error("int", "If trying to convert the data type of a value, try "
                                   "using `x.astype(int)` or `jnp.array(x, int)` instead.")

    # As in JAX, float() and complex() never look at a concrete value: they refuse under
    # any transformation, so that a function's result does not silently depend on it.
    def __float__(self):
        _check_scalar_conversion(self.aval)
        self._concretization_error("float", "If trying to convert the data type of a value, try "
                                   "using `x.astype(float)` or `jnp.array(x, float)` instead.")

    def __complex__(self):
        _check_scalar_conversion(self.aval)
        self._concretization_error("complex", "If trying to convert the data type of a value, "
                                   "try using `x.astype(complex)` or `jnp.array(x, complex)` instead.")

    def _concrete_only(self, context: str):
        """JAX's ``ConcretizationTypeError(tracer, context)``."""
        self._check_alive()
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: "
            f"{self._error_repr()}\n{context}{self._origin_msg()}\n")

    def item(self, *args):
        self._concrete_only("This occurred in the item() method of jax.Array")

    # as JAX's: the context names the origin too, so it is printed twice
    def tolist(self):
        self._called_on("The tolist() method")

    def tobytes(self, order="C"):
        self._called_on("The tobytes() method")

    def __dlpack__(self, *args, **kwargs):
        self._called_on("The __dlpack__() method")

    def __reduce__(self):
        self._concrete_only("The error occurred in the __reduce__ method, which may indicate an "
                            "attempt to serialize/pickle a traced value.")

    @property
    def committed(self):
        self._concrete_only(f"The 'committed' attribute is not available on "
                            f"{self._error_repr()}.{self._origin_msg()}")

    @property
    def addressable_shards(self):
        self._concrete_only(f"The 'addressable_shards' attribute is not available on "
                            f"{self._error_repr()}.{self._origin_msg()}")

    # Array methods and properties only materialized arrays have: JAX's errors
    def addressable_data(self, index):
        self._called_on("The addressable_data() method")

    def delete(self):
        self._called_on("The delete() method")

    def devices(self):
        self._called_on("The devices() method")

    def is_deleted(self):
        self._called_on("The is_deleted() method")

    def on_device_size_in_bytes(self):
        self._called_on("The on_device_size_in_bytes() method")

    def unsafe_buffer_pointer(self):
        self._called_on("The unsafe_buffer_pointer() method")

    global_shards = property(lambda self: self._called_on("The global_shards property"))
    is_fully_addressable = property(
        lambda self: self._called_on("The is_fully_addressable property"))
    is_fully_replicated = property(
        lambda self: self._called_on("The is_fully_replicated property"))
    traceback = property(lambda self: self._called_on("The traceback property"))

    def _called_on(self, what: str):
        self._concrete_only(f"{what} was called on {self._error_repr()}.{self._origin_msg()}")

    def __reversed__(self):
        return iter(self[::-1])

    def __getattr__(self, name):
        # only for names the class lacks: JAX's Tracer.__getattr__ messages
        if name in ("block_until_ready", "copy_to_host_async"):
            raise AttributeError(f"The '{name}' method is not available on "
                                 f"{self._error_repr()}.{self._origin_msg()}")
        if name == "sharding":
            raise AttributeError(f"The 'sharding' attribute is not available on "
                                 f"{self._error_repr()}. To query sharding information on "
                                 "tracers, use `jax.typeof(x)`.")
        raise AttributeError(f"{type(self).__name__} has no attribute {name}")

    def __hash__(self):
        raise TypeError(f"unhashable type: '{type(self).__name__}'. A traced array cannot be used "
                        "as a static argument or a dict key; use a Python value instead.")

    def _check_alive(self):
        if not self._trace.alive:
            raise self._trace.leak_error(self)

    def _short_repr(self) -> str:
        return f"{type(self).__name__}<{self.aval}>"

    def __repr__(self):
        return self._short_repr()


def _check_bool_conversion(aval):
    if aval.size == 0:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` "
                         "to check that an array is not empty.")
    if aval.size > 1:
        raise ValueError("The truth value of an array with more than one element is ambiguous. "
                         "Use a.any() or a.all()")


def _check_scalar_conversion(aval):
    if aval.ndim > 0:
        raise TypeError(f"Only scalar arrays can be converted to Python scalars; got "
                        f"arr.ndim={aval.ndim}")


def _check_integer_conversion(aval):
    if not (aval.shape == () and isinstance(aval.dtype, np.dtype)
            and np.issubdtype(aval.dtype, np.integer)):
        raise TypeError("Only integer scalar arrays can be converted to a scalar index.")


INDEX_HINT = ("A traced value cannot be a Python int: for a loop over a traced bound use "
              "`lax.fori_loop` or `lax.scan` instead of `for i in range(n)`; for a shape or a "
              "size, mark the argument static with `static_argnums`.")

class _ThreadTraceState(threading.local):
    """The current trace, one per thread (as JAX's ``trace_ctx``): two threads tracing at
    once never see each other's tracers. A new thread starts at the bottom (eager) trace."""

    def __init__(self):
        self.trace = _bottom[0]


_bottom: list = [None]  # the EvalTrace, installed by tracer/__init__
_state = _ThreadTraceState()


def set_bottom_trace(trace: Trace) -> None:
    _bottom[0] = trace
    _state.trace = trace


def current_trace() -> Trace:
    return _state.trace


class set_current_trace:
    """``with set_current_trace(trace):`` binds go to ``trace`` for the block (a class, as
    JAX's: entered once per transformed operation, cheaper than a generator's block)."""

    __slots__ = ("trace", "previous")

    def __init__(self, trace: Trace):
        self.trace = trace

    def __enter__(self):
        state = _state
        self.previous = state.trace
        state.trace = self.trace
        _unusual.append(None)  # removed once the trace is restored
        return self.trace

    def __exit__(self, *exc_info):
        _state.trace = self.previous
        _unusual.pop()
        return False


def bind(prim, args, params):
    return _state.trace.process_primitive(prim, args, params)


def __getattr__(name):
    # ``core._current_trace`` (the name before traces became per thread) still reads the
    # calling thread's current trace.
    if name == "_current_trace":
        return _state.trace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def leak_error_for(tracer) -> UnexpectedTracerError:
    return tracer._trace.leak_error(tracer)


set_bind_hook(bind)
