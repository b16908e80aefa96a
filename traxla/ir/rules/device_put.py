"""``device_put``: ``jax.device_put`` of traced values, staged as JAX stages it: one
equation over the leaves, ``devices`` the destination per operand (``None``, a Device or a
single-device sharding), ``srcs`` the source (set by transposition); the values pass
through unchanged."""
from __future__ import annotations

import enum

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.sharding import explicit_only

device_put_p = Primitive("device_put", multiple_results=True)


class ArrayCopySemantics(enum.Enum):
    """Whether a device_put may hand back its input buffer (jaxlib's enum of that name)."""
    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self):  # printed inside the jaxpr's param tuples, as JAX prints them
        return f"ArrayCopySemantics.{self.name}"


def _device_put_rule(*avals, devices, srcs, copy_semantics):
    if not len(avals) == len(devices) == len(srcs) == len(copy_semantics):
        raise ValueError(f"device_put: {len(avals)} operands but {len(devices)} devices, "
                         f"{len(srcs)} srcs and {len(copy_semantics)} copy_semantics")
    # A Device or single-device sharding: the values are unchanged (the program runs on
    # its one device; JAX lowers these to the operands themselves on CPU as well). A
    # NamedSharding: its memory kind becomes the value's memory space, and its spec the
    # type's sharding under Explicit mesh axes.
    return [_placed(a, d) if getattr(d, "mesh", None) is not None else a
            for a, d in zip(avals, devices)]


def _placed(aval, sharding):
    space = "host" if getattr(sharding, "memory_kind", None) == "pinned_host" else None
    typed = aval.sharding_type
    mesh = sharding.mesh.abstract_mesh
    if mesh.explicit_axes:
        typed = explicit_only(mesh, sharding.full_spec(aval.ndim), aval.ndim)
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type, typed, space, aval.vma)


def_typing(device_put_p, _device_put_rule)
