"""``device_put``: ``jax.device_put`` of traced values, staged as JAX stages it (the
values pass through unchanged on the default device; ``devices``/``srcs`` are ``None``
per operand there)."""
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
    if any(d is not None for d in devices):
        raise NotImplementedError("device_put inside a traced function supports only the "
                                  "default device (device=None)")
    return list(avals)


def_typing(device_put_p, _device_put_rule)
