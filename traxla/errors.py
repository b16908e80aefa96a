"""User-facing exception classes, in the style of ``jax.errors``.

Each class subclasses the builtin that JAX users already catch (``TypeError``,
``IndexError``) and appends a pointer to the documentation page that explains
the error with worked examples. This module is a leaf: it imports nothing of
traxla, so every stage may raise these.
"""
from __future__ import annotations

_DOCS = "https://docs.jax.dev/en/latest/errors.html#jax.errors."


class _TraxlaErrorMixin:
    """Appends the docs link for the concrete class to the message."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(f"{message}\nSee {_DOCS}{type(self).__name__}")


class JAXTypeError(_TraxlaErrorMixin, TypeError):
    pass


class JAXIndexError(_TraxlaErrorMixin, IndexError):
    pass


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was requested from an abstract (traced) value."""


class TracerBoolConversionError(ConcretizationTypeError):
    """``bool(tracer)``: typically a Python ``if`` or ``while`` on a traced value."""


class TracerIntegerConversionError(JAXTypeError):
    """``tracer.__index__()``: a traced value used as a Python int (range, list index)."""


class TracerArrayConversionError(JAXTypeError):
    """``np.asarray(tracer)``: a traced value handed to NumPy."""


class UnexpectedTracerError(JAXTypeError):
    """A tracer escaped the transformation that created it and was used later."""


class ShardingTypeError(TypeError):
    """Operands' placements are incompatible, or a result's placement is ambiguous."""


class JaxprTypeError(TypeError):
    """The jaxpr checker found an ill-typed equation."""


class LoweringError(RuntimeError):
    """A module failed MLIR verification: a traxla bug, reported with the primitive."""


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask whose value is not known at trace time was used as an index."""


class KeyReuseError(JAXTypeError):
    """A PRNG key was used twice (checked when ``debug_key_reuse`` is on)."""


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions has no definite answer."""


class TypePromotionError(ValueError):
    """Raised when type promotion fails (``numpy_dtype_promotion='strict'``)."""


# JaxRuntimeError is jaxlib's own runtime error class (what XLA raises when a program fails
# at run time): ``traxla.runtime`` installs it here when it loads, so that this module stays a
# leaf that every layer can import.
JaxRuntimeError: type


TraxlaTypeError = JAXTypeError

__all__ = [
    "JAXTypeError", "JAXIndexError", "ConcretizationTypeError",
    "TracerBoolConversionError", "TracerIntegerConversionError",
    "TracerArrayConversionError", "UnexpectedTracerError", "JaxprTypeError", "ShardingTypeError",
    "LoweringError", "NonConcreteBooleanIndexError", "KeyReuseError",
    "InconclusiveDimensionOperation", "TypePromotionError", "JaxRuntimeError",
]

# CallbackError, a JaxRuntimeError (installed with it): a host callback (``debug.callback``,
# ``pure_callback``, ``io_callback``) failed while a compiled program ran (or an eager
# ``pure_callback``/``io_callback``, which JAX runs compiled). Its message is JAX's,
# ``INTERNAL: CpuCallback error calling callback: `` and the exception's traceback; its
# ``__cause__`` is that exception.
CallbackError: type
