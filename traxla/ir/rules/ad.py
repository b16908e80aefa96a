"""``add_any``: the sum of two cotangents (or tangents), emitted by autodiff."""
from __future__ import annotations

from ..avals import ShapedArray
from ..primitive import Primitive, def_typing
from ._util import check_same_dtypes

add_any_p = Primitive("add_any")


def _add_any_rule(x, y):
    if x.shape != y.shape:
        raise TypeError(f"add_any requires equal shapes, got {x.shape} and {y.shape}.")
    check_same_dtypes("add_any", (x, y))
    return ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)


def_typing(add_any_p, _add_any_rule)
