"""``jax.experimental.primal_tangent_dtype``: an extended dtype whose values are stored as
``primal_dtype`` and whose tangents (and cotangents) have ``tangent_dtype``, defined through
the type rules of a library's extended dtype (``_rules``, JAX's protocol), as JAX's
``PrimalTangentDType``."""
from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any

import numpy as np

from traxla.ir.dtypes import ExtendedDType, extended


class primal_tangent_dtype_scalar(extended):
    """The scalar class of ``primal_tangent_dtype`` dtypes (under ``dtypes.extended``)."""


@dataclasses.dataclass(frozen=True, eq=True)
class PrimalTangentDType(ExtendedDType):
    primal_dtype: Any
    tangent_dtype: Any
    name: str
    type = primal_tangent_dtype_scalar

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __hash__(self):
        return hash((PrimalTangentDType, self.primal_dtype, self.tangent_dtype, self.name))

    @property
    def _rules(self):
        return types.SimpleNamespace(
            physical_element_aval=lambda dtype: types.SimpleNamespace(
                shape=(), dtype=self.primal_dtype),
            tangent_dtype=lambda dtype: self.tangent_dtype,
            allow_conversion=True)


@functools.cache
def short_dtype_name(dtype) -> str:
    """``f32``, ``i8``, ``u4``, ``c64``; an extended dtype's own name."""
    if isinstance(dtype, ExtendedDType):
        return str(dtype)
    return (dtype.name.replace("float", "f").replace("uint", "u").replace("int", "i")
            .replace("complex", "c"))


def _dtype(x):
    if isinstance(x, ExtendedDType):
        return x
    d = getattr(x, "dtype", None)  # (jnp.float32 and arrays carry theirs)
    return d if isinstance(d, (np.dtype, ExtendedDType)) else np.dtype(x)


def primal_tangent_dtype(primal_dtype, tangent_dtype, name: str | None = None):
    """JAX's: an extended dtype stored as ``primal_dtype`` whose tangents are
    ``tangent_dtype`` (reached with ``lax.convert_element_type`` inside ``jit``)."""
    primal_dtype, tangent_dtype = map(_dtype, (primal_dtype, tangent_dtype))
    name_ = name or (f"PrimalTangentDType{{{short_dtype_name(primal_dtype)}"
                     f"/{short_dtype_name(tangent_dtype)}}}")
    return PrimalTangentDType(primal_dtype, tangent_dtype, name_)
