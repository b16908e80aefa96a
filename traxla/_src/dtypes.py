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
