"""``device_put``: ``jax.device_put`` of traced values, staged as JAX stages it: one
equation over the leaves, ``devices`` the destination per operand (``None``, a Device or a
single-device sharding), ``srcs`` the source (set by transposition); the values pass
through unchanged."""
from __future__ import annotations

import enum

from traxla.ir.primitive import Primitive, def_typing

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
    for d in devices:
        if getattr(d, "mesh", None) is not None:  # a NamedSharding: a layout, not a device
            raise NotImplementedError(
                f"device_put of a traced value to {d}: traxla places traced values on one "
                "device; use traxla.lax.with_sharding_constraint to lay them out on a mesh")
    # A Device or single-device sharding: the values are unchanged (the program runs on
    # its one device; JAX lowers these to the operands themselves on CPU as well).
    return list(avals)


def_typing(device_put_p, _device_put_rule)
