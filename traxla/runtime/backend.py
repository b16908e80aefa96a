"""PJRT clients per platform, created lazily, and traxla's Device wrapper."""
from __future__ import annotations

from ..ir.config import config
from . import xla_adapter as xla


class Device:
    """A device users can see; the jaxlib object stays inside."""

    __slots__ = ("_device", "id", "platform", "process_index")

    def __init__(self, device):
        self._device = device
        self.id = device.id
        self.platform = device.platform
        self.process_index = device.process_index

    def __repr__(self):
        return f"CpuDevice(id={self.id})" if self.platform == "cpu" else f"Device({self.platform}:{self.id})"

    def __eq__(self, other):
        return isinstance(other, Device) and other._device == self._device

    def __hash__(self):
        return hash((self.platform, self.id))


class Backend:
    """One platform's client, its devices, and the default device's sharding."""

    def __init__(self, platform: str = "cpu"):
        self.platform = platform
        self.client = xla.cpu_client(config.read("num_cpu_devices"))
        self.raw_devices = xla.devices(self.client)
        self.devices = [Device(d) for d in self.raw_devices]
        local_ids = {d.id for d in xla.local_devices(self.client)}
        self.local_devices = [d for d in self.devices if d.id in local_ids]
        self.default_device = self.local_devices[0]._device
        self.default_sharding = xla.single_device_sharding(self.default_device)


_backends: dict[str, Backend] = {}


def get_backend(platform: str = "cpu") -> Backend:
    backend = _backends.get(platform)
    if backend is None:
        backend = _backends[platform] = Backend(platform)
    return backend


def _refuse_late_device_count(name, value):
    if name == "num_cpu_devices" and xla.backend_started("cpu") and value != config.read(name):
        raise RuntimeError(
            "traxla.config.update('num_cpu_devices', ...) must run before the CPU backend is first "
            f"used; it has already started with {config.read(name)} device(s).")


config.on_update(_refuse_late_device_count)


def devices(platform: str = "cpu"):
    return list(get_backend(platform).devices)


def local_devices(platform: str = "cpu"):
    return list(get_backend(platform).local_devices)
