"""``traxla.typing``: annotations for arguments, as ``jax.typing``.

``ArrayLike`` is what converts implicitly to an array (traxla Arrays and tracers,
NumPy arrays and scalars, Python scalars; not lists, not strings); ``DTypeLike`` is
what names a dtype. Both work with ``isinstance``."""
from __future__ import annotations

import typing
from typing import Any, Protocol, Union

import numpy as np

from traxla.runtime import Array
from traxla.tracer import Tracer

DType = np.dtype


@typing.runtime_checkable
class SupportsDType(Protocol):
    @property
    def dtype(self, /) -> DType: ...


ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]

DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

__all__ = ["ArrayLike", "DTypeLike"]
