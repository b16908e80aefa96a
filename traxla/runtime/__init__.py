"""Runtime: PJRT clients, Arrays, compilation, the eager cache and dispatch.
Imports ``lowering/``, ``tracer/`` and ``ir/``; never traces. Loading it installs the eager
evaluator into the bottom trace and jaxlib's runtime error class into ``traxla.errors``."""
from traxla import errors as _errors
from traxla.runtime.xla_adapter import execution as _xla
from traxla.tracer import eval as _tracer_eval
from traxla.runtime.array import Array, ArrayImpl, device_put_numpy
from traxla.runtime.backend import Device, devices, get_backend
from traxla.runtime.dispatch import apply_primitive, to_array
from traxla.runtime.executable import Executable, compile_jaxpr

_errors.JaxRuntimeError = _xla.RuntimeErrorType


class CallbackError(_xla.RuntimeErrorType):
    """A host callback failed (``traxla.errors`` describes it)."""


CallbackError.__module__ = "traxla.errors"
_errors.CallbackError = CallbackError
_tracer_eval.apply_primitive = apply_primitive

__all__ = ["Array", "ArrayImpl", "device_put_numpy", "Device", "devices", "get_backend", "apply_primitive",
           "to_array", "Executable", "compile_jaxpr"]
