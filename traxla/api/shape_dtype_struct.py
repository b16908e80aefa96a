"""``ShapeDtypeStruct`` (an array's shape, dtype, weak type and sharding, without
data) and ``eval_shape`` (a function's output structs, traced but never compiled)."""
from __future__ import annotations

import math

import numpy as np

from traxla import tree_util
from traxla.api.hijax_args import all_immutable, has_hi_leaves, trace_with_hi_args
from traxla.ir.avals import ShapedArray
from traxla.ir.dtypes import ExtendedDType, canonicalize
from traxla.ir.sharding import PartitionSpec
from traxla.ir.traceback_util import api_boundary
from traxla.runtime.placement import NamedSharding, SingleDeviceSharding
from traxla.sharding import get_mesh
import traxla.api as _api
from traxla.runtime import ArrayImpl
from traxla.tracer import Tracer


class ShapeDtypeStruct:
    """The static attributes of an array: what ``eval_shape`` returns, and what
    ``jit(f).trace/lower`` and ``eval_shape`` accept in place of an argument."""

    __slots__ = ("shape", "dtype", "_sharding", "weak_type", "manual_axis_type", "is_ref")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False, manual_axis_type=None,
                 is_ref=False):
        object.__setattr__(self, "shape", tuple(shape))
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        dtype = dtype if isinstance(dtype, ExtendedDType) else np.dtype(dtype)
        object.__setattr__(self, "dtype", dtype)
        if sharding is not None and not isinstance(
                sharding, (NamedSharding, SingleDeviceSharding, PartitionSpec)):
            raise ValueError(
                "sharding should be an instance of `jax.sharding.Sharding`, "
                "`jax.sharding.PartitionSpec` or `jax.experimental.layout.Format`. Got "
                f"{sharding} of type {type(sharding)}.")
        object.__setattr__(self, "_sharding", sharding)
        object.__setattr__(self, "weak_type", weak_type)
        object.__setattr__(self, "manual_axis_type", manual_axis_type)
        object.__setattr__(self, "is_ref", is_ref)

    def __setattr__(self, name, value):
        raise RuntimeError(f"Cannot reassign attributes ({name}) of immutable ShapeDtypeStruct "
                           "objects")

    @property
    def __traxla_abstract__(self) -> ShapedArray:
        """Its type, for a trace that meets it as a value (JAX's get_aval of a struct)."""
        return ShapedArray(self.shape, canonicalize(self.dtype), self.weak_type)

    size = property(lambda self: math.prod(self.shape))
    ndim = property(lambda self: len(self.shape))

    @property
    def sharding(self):
        if isinstance(self._sharding, PartitionSpec):
            mesh = get_mesh()
            if mesh is None:
                raise TypeError("When specifying PartitionSpec to `ShapeDtypeStruct`, the "
                                "context mesh cannot be empty. Please use `jax.set_mesh` to set "
                                "the mesh context.")
            return NamedSharding(mesh, self._sharding)
        return self._sharding

    @classmethod
    def like(cls, x) -> "ShapeDtypeStruct":
        """The struct of ``x`` (an Array, a NumPy array, a scalar or anything with
        ``.shape`` and ``.dtype``); a placed Array keeps its sharding."""
        aval = x if _is_abstract(x) else _api.typeof(x)
        sharding = getattr(x, "_placement", None) or (
            x.sharding if isinstance(x, ShapeDtypeStruct) else None)
        return cls(aval.shape, aval.dtype, sharding=sharding,
                   weak_type=getattr(aval, "weak_type", False))

    def __len__(self):
        try:
            return self.shape[0]
        except IndexError as e:
            raise TypeError("len() of unsized object") from e

    def __repr__(self):
        sh = f", sharding={self.sharding}" if self._sharding is not None else ""
        wt = f", weak_type={self.weak_type}" if self.weak_type else ""
        ref = f", is_ref={self.is_ref}" if self.is_ref else ""
        return f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype.name}{sh}{wt}{ref})"

    __str__ = __repr__

    def _key(self):
        return (self.shape, self.dtype, self._sharding, self.weak_type, self.manual_axis_type,
                self.is_ref)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def update(self, **kwargs) -> "ShapeDtypeStruct":
        return ShapeDtypeStruct(
            shape=kwargs.pop("shape", self.shape), dtype=kwargs.pop("dtype", self.dtype),
            sharding=kwargs.pop("sharding", self._sharding),
            weak_type=kwargs.pop("weak_type", self.weak_type),
            manual_axis_type=kwargs.pop("manual_axis_type", self.manual_axis_type),
            is_ref=kwargs.pop("is_ref", self.is_ref))


def _is_abstract(x) -> bool:
    """A shape-and-dtype object with no data (a ShapeDtypeStruct, an aval, or any
    duck-typed struct), as opposed to an array or a scalar."""
    return (hasattr(x, "shape") and hasattr(x, "dtype")
            and not isinstance(x, (np.ndarray, np.generic, ArrayImpl, Tracer)))


def struct_of_aval(aval, sharding=None) -> ShapeDtypeStruct:
    """The struct of a value typed ``aval``: a sharding its type names (Explicit axes)
    goes with it on the abstract mesh, as JAX's ``eval_shape`` gives it."""
    if getattr(aval, "is_high", False) is True:  # a high-level (hijax) type: itself, as JAX
        return aval
    if sharding is None and getattr(aval, "sharding_type", None) is not None:
        sharding = aval.sharding
    return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=sharding)


@api_boundary
def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of
    ``ShapeDtypeStruct``s: ``fun`` is traced (arguments may be structs) but never
    compiled nor run. Hijax arguments (flax's hijax Variables) are traced as their
    low-level values, and left as they were."""
    leaves = tree_util.tree_leaves((args, kwargs))
    if has_hi_leaves(leaves) and not all_immutable(leaves):
        return trace_with_hi_args(_api.jit(fun), args, kwargs).out_info[0]
    return _api.jit(fun).trace(*args, **kwargs).out_info


__all__ = ["ShapeDtypeStruct", "eval_shape"]
