"""What ``custom_jvp``/``custom_vjp`` rules see with ``symbolic_zeros=True`` (JAX's
``SymbolicZero``, ``CustomVJPPrimal``): a zero tangent or cotangent as an object that
knows its type but holds no data, and each primal with whether it is perturbed."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from traxla import primitives as prims, tree_util
from traxla.autodiff.ad import tangent_aval, zeros_like_aval


class SymbolicZero:
    """A zero (co)tangent of type ``aval``; attributes such as ``shape`` and ``dtype`` are
    the aval's."""

    def __init__(self, aval) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return self.__class__.__name__

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    @staticmethod
    def from_primal_value(val) -> "SymbolicZero":
        return SymbolicZero(tangent_aval(prims.aval_of(val)))


def zero_from_primal(val, symbolic_zeros=False):
    """Zero tangents shaped like the pytree ``val`` (symbolic ones when asked)."""
    def f(x):
        aval = tangent_aval(prims.aval_of(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)
    return tree_util.tree_map(f, val)


@dataclass
class CustomVJPPrimal:
    """Primal to a ``custom_vjp``'s forward rule when ``symbolic_zeros`` is set."""

    value: Any
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """The tree of ``CustomVJPPrimal`` records with each replaced by its ``value``."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_util.tree_map(value, tree)


__all__ = ["SymbolicZero", "zero_from_primal", "CustomVJPPrimal",
           "custom_vjp_primal_tree_values"]
