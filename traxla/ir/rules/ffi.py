"""The ``ffi_call`` primitive: a call to a native XLA FFI handler registered by the user
(``traxla.ffi``), typed by the result shapes the user declared, with the parameters JAX's
``ffi_call_p`` carries so that the equation prints as JAX prints it."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.effects import NO_EFFECTS, Effect, def_effects
from traxla.ir.primitive import Primitive, def_typing

ffi_call_p = Primitive("ffi_call", multiple_results=True)

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                "legacy_vectorized", None)


class HashableArray:
    """A read-only copy of a NumPy array attribute, hashed and compared by value (an
    equation's parameters are part of cache keys)."""
    __slots__ = ("val",)

    def __init__(self, val):
        self.val = np.array(val, copy=True)
        self.val.setflags(write=False)

    def __repr__(self):
        return f"HashableArray({self.val!r})"

    def __str__(self):
        return f"HashableArray({self.val})"

    def __hash__(self):
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other):
        return (isinstance(other, HashableArray) and self.val.shape == other.val.shape
                and self.val.dtype == other.val.dtype and np.array_equal(self.val, other.val))


class FrozenDict(Mapping):
    """A dictionary attribute (an FFI struct), immutable and hashed by value."""
    __slots__ = ("_d",)

    def __init__(self, d):
        self._d = dict(d.items())

    def __repr__(self):
        return f"FrozenDict({self._d!r})"

    def __str__(self):
        return f"FrozenDict({self._d})"

    def __getitem__(self, key):
        return self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        return hash(tuple(sorted(self._d.items())))

    def __eq__(self, other):
        return isinstance(other, FrozenDict) and self._d == other._d


def hashable_attributes(kwargs) -> tuple:
    """The keyword attributes of an FFI call as a sorted, hashable tuple (as JAX's
    ``_wrap_kwargs_hashable``)."""
    out = []
    for k, v in sorted(kwargs.items()):
        if isinstance(v, np.ndarray):
            out.append((k, HashableArray(v)))
        elif isinstance(v, dict):
            out.append((k, FrozenDict(v)))
        else:
            try:
                hash(v)
            except TypeError as e:
                raise TypeError(f"Non-hashable keyword argument to ffi_call {k}: {v}") from e
            out.append((k, v))
    return tuple(out)


def unwrap_attributes(attributes) -> dict:
    out = {}
    for k, v in attributes:
        if isinstance(v, HashableArray):
            v = v.val
        elif isinstance(v, FrozenDict):
            v = v._d
        out[k] = v
    return out


def _ffi_call_typing(*avals_in, result_avals, **_):
    return [ShapedArray(r.shape, r.dtype) for r in result_avals]


def_typing(ffi_call_p, _ffi_call_typing)


class FfiEffect(Effect):
    """``has_side_effect=True``: the call runs even when its results are unused (JAX's)."""
    name = "FFI"


ffi_effect = FfiEffect()
def_effects(ffi_call_p, lambda params: frozenset({ffi_effect}) if params["has_side_effect"]
            else NO_EFFECTS)

P = {"ffi_call": ffi_call_p}
