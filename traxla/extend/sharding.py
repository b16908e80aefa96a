"""``jax.extend.sharding``: ``GSPMDSharding`` (an XLA HloSharding over a list of devices)
and conversions between HloShardings and their serialized ``OpSharding`` protos."""
from __future__ import annotations

from jaxlib import xla_client

_xc = xla_client

from traxla.runtime.placement import HloPlacement


class GSPMDSharding(HloPlacement):
    """An array's placement given as XLA's ``HloSharding`` (or ``OpSharding``) over
    ``devices``, as JAX's. traxla places arrays by it through the equivalent
    NamedSharding (one mesh axis per tile dimension)."""

    def __init__(self, devices, op_sharding, *, memory_kind=None):
        if isinstance(op_sharding, _xc.OpSharding):
            op_sharding = _xc.HloSharding.from_proto(op_sharding)
        if not isinstance(op_sharding, _xc.HloSharding):
            raise TypeError(f"GSPMDSharding takes an xla_client.HloSharding or OpSharding, "
                            f"got {type(op_sharding).__name__}")
        super().__init__(list(devices), op_sharding)
        if memory_kind not in (None, "device"):
            raise NotImplementedError(f"GSPMDSharding with memory_kind={memory_kind!r}")

    @classmethod
    def get_replicated(cls, device_assignment, *, memory_kind=None):
        return cls(tuple(device_assignment), _xc.HloSharding.replicate(),
                   memory_kind=memory_kind)

    @property
    def _hlo_sharding(self):
        return self.hlo

    def _to_xla_hlo_sharding(self, num_dimensions: int):
        return self.hlo

    @property
    def _device_assignment(self):
        return tuple(self.devices)

    @property
    def device_set(self) -> set:
        return set(self.devices)

    @property
    def num_devices(self) -> int:
        return len(self.devices)

    @property
    def is_fully_replicated(self) -> bool:
        return self.hlo.num_devices() == 1 or self.hlo.is_replicated()

    @property
    def is_fully_addressable(self) -> bool:
        return True  # (one process: every device is addressable)

    def addressable_devices_indices_map(self, shape):
        return self.devices_indices_map(shape)

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Whether ``other`` places an array of rank ``ndim`` the same way (the same block
        on the same device)."""
        if not hasattr(other, "devices_indices_map") or \
                getattr(other, "memory_kind", "device") != self.memory_kind:
            return False
        shape = (self.num_devices,) * ndim  # (every tiling of these devices divides it)
        try:
            theirs = other.devices_indices_map(shape)
        except Exception:  # noqa: BLE001 - a sharding that cannot place this shape
            return False
        ours = self.devices_indices_map(shape)
        return {d.id: i for d, i in ours.items()} == {d.id: i for d, i in theirs.items()}

    def shard_shape(self, global_shape):
        return self.as_named().shard_shape(global_shape)

    def __repr__(self):
        return f"GSPMDSharding({self.hlo}, memory_kind={self.memory_kind})"


def get_op_sharding_from_serialized_proto(sharding: bytes):
    proto = _xc.OpSharding()
    proto.ParseFromString(sharding)
    return proto


def get_hlo_sharding_from_serialized_proto(sharding: bytes):
    return _xc.HloSharding.from_proto(get_op_sharding_from_serialized_proto(sharding))


def get_serialized_proto_from_hlo_sharding(sharding) -> bytes:
    return sharding.to_proto().SerializeToString()


__all__ = ["GSPMDSharding", "get_hlo_sharding_from_serialized_proto",
           "get_op_sharding_from_serialized_proto", "get_serialized_proto_from_hlo_sharding"]
