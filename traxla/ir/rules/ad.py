"""Primitives autodiff emits: ``add_any`` (the sum of two cotangents or tangents) and
``empty2`` (an unspecified scalar padding the residual slots a cond branch does not fill)."""
from __future__ import annotations

import enum

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules._util import check_same_dtypes

add_any_p = Primitive("add_any")


def _add_any_rule(x, y):
    if x.shape != y.shape:
        raise TypeError(f"add_any requires equal shapes, got {x.shape} and {y.shape}.")
    check_same_dtypes("add_any", (x, y))
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def_typing(add_any_p, _add_any_rule, memoize=True)  # (a pure function of its avals)


# -- empty2: an unspecified scalar, used to pad residual slots a cond branch does not fill -------
class MemorySpace(enum.Enum):
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()


empty2_p = Primitive("empty2")


def _empty2_rule(*, dtype, memory_space):
    return ShapedArray((), np.dtype(dtype), False)


def_typing(empty2_p, _empty2_rule)
