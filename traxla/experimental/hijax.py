"""``traxla.experimental.hijax``: the names of ``jax.experimental.hijax`` (JAX's
high-level types: user-defined abstract values with primitives of their own).

traxla does not implement hijax types. The module exists so that libraries which define
them at import time (flax.nnx's hijax variables, off by default) import: their classes can
subclass ``HiPrimitive`` / ``HiType`` / ``MutableHiType`` and register with
``register_hitype``; binding a ``HiPrimitive`` raises NotImplementedError naming it."""
from __future__ import annotations

from traxla.autodiff.ad import Zero, instantiate as instantiate_zeros  # noqa: F401
from traxla.autodiff.ad import is_undefined as is_undefined_primal  # noqa: F401
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.refs import AbstractRef  # noqa: F401

AbstractValue = ShapedArray


class _EffectTypeSet:
    """Effect types allowed inside control flow (``add_type``, ``contains``)."""

    def __init__(self):
        self._types: set = set()

    def add_type(self, effect_type) -> None:
        self._types.add(effect_type)

    def contains(self, eff) -> bool:
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()

_hitypes: dict = {}


def register_hitype(typ, to_aval) -> None:
    """Records ``to_aval`` as the abstract value function of ``typ``'s instances."""
    _hitypes[typ] = to_aval


class HiType:
    """Base of the abstract values of high-level types."""

    is_high = True


class MutableHiType(HiType):
    pass


class HiPspec:
    pass


class HiPrimitive:
    """A primitive on high-level types; traxla cannot bind one."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return self.name

    def bind(self, /, *args, **params):
        raise NotImplementedError(
            f"jax.experimental.hijax: traxla does not implement high-level (hijax) types; "
            f"the HiPrimitive '{self.name}' cannot be bound")


class VJPHiPrimitive(HiPrimitive):
    pass


class AvalQDD:
    """An abstract value with its quasi-dynamic data."""

    __slots__ = ("aval", "qdd")

    def __init__(self, aval, qdd):
        self.aval = aval
        self.qdd = qdd


class AvalMutableQDD(AvalQDD):
    __slots__ = ()


class aval_property(property):
    """A property of a high-level type's abstract value."""


class aval_method:
    """A method of a high-level type's abstract value."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, instance, owner=None):
        return self.fun if instance is None else self.fun.__get__(instance, owner)


__all__ = ["AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiPspec", "HiType",
           "MutableHiType", "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal",
           "register_hitype"]
