"""``jax._src.dtypes``: the public ``jax.dtypes`` names and the private helpers libraries use
(``dtype``, ``promote_types``, ``supports_inf``, ``is_weakly_typed``, ``ExtendedDType``)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from traxla.dtypes import *  # noqa: F401,F403
from traxla.dtypes import __all__ as _public, canonicalize_dtype, finfo, issubdtype  # noqa: F401
from traxla.ir.dtypes import ExtendedDType, is_extended  # noqa: F401
from traxla.flatten_util import _dtype
from traxla.numpy import promote_types  # noqa: F401

DType = np.dtype


def dtype(x, *, canonicalize: bool = False):
    """The dtype of ``x`` (a value, a dtype or a scalar type); 64-bit for Python scalars
    unless ``canonicalize``."""
    if isinstance(x, type) and x in (bool, int, float, complex):
        out = np.dtype({bool: bool, int: np.int64, float: np.float64,
                        complex: np.complex128}[x])
    elif isinstance(x, (np.dtype, ExtendedDType)) or (isinstance(x, type)
                                                      and issubclass(x, np.generic)):
        out = x if isinstance(x, ExtendedDType) else np.dtype(x)
    elif isinstance(x, str):
        out = np.dtype(x)
    else:
        out = _dtype(x)
    return canonicalize_dtype(out) if canonicalize and not is_extended(out) else out


def is_weakly_typed(x) -> bool:
    if type(x) in (bool, int, float, complex):
        return True
    return bool(getattr(getattr(x, "aval", x), "weak_type", False))


_NO_INF = tuple(getattr(ml_dtypes, n) for n in ("float8_e4m3b11fnuz", "float8_e4m3fn",
                                                 "float8_e4m3fnuz", "float8_e5m2fnuz")
                 if hasattr(ml_dtypes, n))


def supports_inf(dtype) -> bool:
    """Whether the dtype has infinities: inexact, and not one of the finite float8 kinds."""
    if np.dtype(dtype).type in _NO_INF:
        return False
    return bool(issubdtype(dtype, np.inexact))


__all__ = list(_public) + ["DType", "ExtendedDType", "dtype", "is_weakly_typed",
                           "promote_types", "supports_inf"]


# JAX's registry of canonicalization handlers for array-like types of a user's own
# (``jax.interpreters.xla.canonicalize_dtype_handlers`` is the same object).
from traxla.ir.literals import TypedNdArray as _TypedNdArray  # noqa: E402
from traxla.ir.pytype_registry import (canonicalize_value_handlers,  # noqa: E402,F401
                                       register_canonicalize_value_handler,
                                       value_handler_for as _value_handler_for)


class InvalidInputException(TypeError):
    """JAX's error for a value whose type is not a valid JAX type."""


def canonicalize_value(x):
    """``x`` as a value of a type JAX knows, in its canonical dtype: a registered handler's
    result for a type of a user's own, a ``TypedNdArray`` for a NumPy array or scalar, a
    Python scalar as it is; anything else is an ``InvalidInputException``."""
    t = type(x)
    handler = _value_handler_for(t)
    if handler is not None:
        return handler(x)
    if t in (bool, int, float, complex) or t is _TypedNdArray or hasattr(t, "__traxla_array__"):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _TypedNdArray(np.asarray(x, canonicalize_dtype(x.dtype)))
    if getattr(x, "__jax_array__", None) is not None:
        raise ValueError(
            "Triggering __jax_array__() during abstractification is no longer supported. To "
            "avoid this error, either explicitly convert your object using jax.numpy.array(), "
            "or register your object as a pytree.")
    raise InvalidInputException(f"Argument '{x}' of type {t} is not a valid JAX type.")


# jax.experimental.primal_tangent_dtype's dtype class and helpers (JAX's jax._src.dtypes).
from traxla.experimental._primal_tangent import (  # noqa: E402,F401
    PrimalTangentDType, primal_tangent_dtype, primal_tangent_dtype_scalar, short_dtype_name)
