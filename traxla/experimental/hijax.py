"""``traxla.experimental.hijax``: the names of ``jax.experimental.hijax`` (JAX's
high-level types: user-defined types whose values are Python objects, with primitives of
their own that say how they lower to ordinary arrays).

A ``HiPrimitive`` is always lowered where it is bound: its ``to_lojax`` rule runs in the
current trace (JAX does so eagerly, and when it lowers a staged jaxpr before compiling).
Inside ``jit`` a hijax value is therefore a Python object holding tracers: ``jit`` and
``eval_shape`` turn a hijax argument into its low-level values (``lower_val`` /
``read_loval``), rebuild it inside the trace (``raise_val`` / ``new_from_loval``) and, for a
mutable one, write its final state back afterwards (``update_from_loval``), as JAX's
``jit`` does (``traxla/api/hijax_args.py``). ``register_hitype`` makes ``typeof`` of the
type's values its abstract value."""
from __future__ import annotations

from collections import namedtuple

from traxla.autodiff.ad import Zero, instantiate as instantiate_zeros  # noqa: F401
from traxla.autodiff.ad import is_undefined as is_undefined_primal  # noqa: F401
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive
from traxla.ir.rules.refs import AbstractRef  # noqa: F401
from traxla.tracer.values import hitype_avals

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

# A property and a method of a high-level type's abstract value (JAX's ``core``
# namedtuples: a tracer of the type forwards the attribute to its value).
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


def register_hitype(typ, to_aval) -> None:
    """``typeof(x)`` of an instance of ``typ`` is ``to_aval(x)``."""
    hitype_avals[typ] = to_aval


def cur_qdd(x):
    """The quasi-dynamic data (a mutable hijax value's current type state) of ``x``:
    ``x.cur_qdd()`` (a value is never a tracer here: see the module's docstring)."""
    return x.cur_qdd()


class HiType:
    """Base of the abstract values of immutable high-level types."""

    is_high = True
    has_qdd = False

    def lo_ty(self):
        raise NotImplementedError(f"{type(self).__name__} must define lo_ty")

    def lower_val(self, hi_val):
        raise NotImplementedError(f"{type(self).__name__} must define lower_val")

    def raise_val(self, *lo_vals):
        raise NotImplementedError(f"{type(self).__name__} must define raise_val")

    def to_tangent_aval(self):
        raise NotImplementedError(f"{type(self).__name__} must define to_tangent_aval")

    def to_ct_aval(self):
        return self.to_tangent_aval()


class MutableHiType(HiType):
    """Base of the abstract values of mutable high-level types: their lowering depends on
    the value's current quasi-dynamic data (``cur_qdd``)."""

    has_qdd = True
    is_writer = False

    def lo_ty(self):
        raise AssertionError("mutable hitypes should use lo_ty_qdd instead")

    def lo_ty_qdd(self, state, /):
        raise NotImplementedError(f"{type(self).__name__} must define lo_ty_qdd")

    def new_from_loval(self, state, /, *lo_vals):
        raise NotImplementedError(f"{type(self).__name__} must define new_from_loval")

    def read_loval(self, state, val, /):
        raise NotImplementedError(f"{type(self).__name__} must define read_loval")

    def update_from_loval(self, state, val, /, *lo_vals) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define update_from_loval")


class HiPspec:
    pass


def _typeof_or_self(x):
    from traxla.api.device_arrays import typeof  # noqa: PLC0415  (same layer, loads later)
    try:
        return typeof(x)
    except Exception:  # noqa: BLE001  (an operand that is no value: is_high sees it as is)
        return x


class HiPrimitive(Primitive):
    """A primitive on high-level values. Binding it runs its ``to_lojax`` rule in the
    current trace (where ``is_high`` is true, the default); one that says it is not high
    runs its ``impl`` outside any transformation."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name  # (multiple_results: the subclass's class attribute)

    def is_high(self, *avals, **params) -> bool:
        return True

    def is_effectful(self, params) -> bool:
        return False

    def abstract_eval(self, *avals, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define abstract_eval")

    def to_lojax(self, *args, **params):
        raise NotImplementedError(
            f"Primitive '{self.name}' has is_high=True but no to_lojax lowering rule.")

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define jvp")

    def transpose(self, *args, **params):
        raise NotImplementedError(f"HiPrimitive '{self.name}' must define transpose")

    def bind(self, /, *args, **params):
        if self.is_high(*map(_typeof_or_self, args), **params):
            return self.to_lojax(*args, **params)
        impl = getattr(self, "impl", None)
        if impl is None:
            raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")
        return impl(*args, **params)


class VJPHiPrimitive:
    """JAX's new-style hijax primitive (a class with ``in_avals``, ``out_aval`` and
    ``params``, and its own VJP): libraries may define one; traxla cannot apply it."""

    def __init__(self):
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")

    def __call__(self, *args):
        raise NotImplementedError(
            f"jax.experimental.hijax: traxla does not implement VJPHiPrimitive; "
            f"'{type(self).__name__}' cannot be applied")


class AvalQDD:
    """An abstract value with its (immutable) quasi-dynamic data."""

    __slots__ = ("aval", "qdd")
    is_high = True
    has_qdd = True

    def __init__(self, aval, qdd):
        self.aval = aval
        self.qdd = qdd

    def lo_ty(self):
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val):
        return self.aval.read_loval(self.qdd, val)

    def new_from_loval(self, *lo_vals):
        return self.aval.new_from_loval(self.qdd, *lo_vals)

    def to_tangent_aval(self):
        return AvalQDD(self.aval.to_tangent_aval(), self.qdd and self.qdd.to_tangent_qdd())

    def __eq__(self, other):
        return (type(other) is type(self) and self.aval == other.aval
                and self.qdd == other.qdd)

    def __hash__(self):
        return hash((self.aval, self.qdd))

    def __repr__(self):
        return f"{type(self).__name__}(aval={self.aval!r}, qdd={self.qdd!r})"


class AvalMutableQDD:
    """An abstract value with quasi-dynamic data that typing rules update."""

    __slots__ = ("aval", "mutable_qdd")

    def __init__(self, aval, mutable_qdd):
        self.aval = aval
        self.mutable_qdd = mutable_qdd


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiPspec", "HiType", "MutableHiType", "ShapedArray", "VJPHiPrimitive", "Zero",
           "aval_method", "aval_property", "control_flow_allowed_effects", "cur_qdd",
           "instantiate_zeros", "is_undefined_primal", "register_hitype"]
