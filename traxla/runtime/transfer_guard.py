"""Transfer guards, as JAX's (``jax.transfer_guard``): each transfer between the host and a
device, or between devices, that traxla makes for the user asks the guard of its direction
first.

Levels, per direction (the config options ``jax_transfer_guard_host_to_device``,
``..._device_to_device``, ``..._device_to_host``; None reads as "allow"):
- "allow": every transfer, silently;
- "log": implicit transfers are logged (logger "traxla", WARNING), explicit ones allowed;
- "disallow": implicit transfers raise JaxRuntimeError, explicit ones are allowed;
- "log_explicit": every transfer is logged;
- "disallow_explicit": every transfer raises.
Explicit transfers are those the user asked for by name (``device_put``, ``device_get``):
they run inside ``explicit()``. Everything else is implicit: a NumPy array or a Python
scalar given to a jitted function or to an operation, an uncommitted array moved to
another device.

As in JAX, reading a CPU array back (``np.asarray(x)``, ``float(x)``) is no transfer: the
host reads the CPU device's buffer in place, so only other platforms' arrays ask the
device-to-host guard. The hot path pays one attribute read per transfer (none for calls
whose arguments are already on their devices).
"""
from __future__ import annotations

import logging
import threading

from traxla.ir.config import config
from traxla.runtime.xla_adapter import execution as xla

_flags = config.current  # this thread's view of the options
_logger = logging.getLogger("traxla")


class _Scope(threading.local):
    explicit = 0   # inside explicit(): device_put, device_get
    through = 0    # inside moving(): a device-to-device move made through the host


_scope = _Scope()


class explicit:
    """``with explicit():`` — the transfers of the block are explicit (``device_put``)."""

    __slots__ = ()

    def __enter__(self):
        _scope.explicit += 1

    def __exit__(self, *exc):
        _scope.explicit -= 1


class internal:
    """``with internal():`` — the block's transfers are traxla's own (a value the user gave
    as a host value, already guarded, moving on to its devices): no guard asks."""

    __slots__ = ()

    def __enter__(self):
        _scope.through += 1

    def __exit__(self, *exc):
        _scope.through -= 1


def active(direction: str) -> bool:
    """Whether the guard of ``direction`` ("host_to_device", ...) may act on a transfer."""
    return _level("transfer_guard_" + direction) not in (None, "allow")


class moving(internal):
    """``with moving(array, dst_sharding):`` — the block moves ``array`` to another device
    (through the host): one device-to-device transfer for the guards, not two."""

    __slots__ = ()

    def __init__(self, array, dst_sharding, source=True):
        device_to_device(array.aval, array.sharding if source else None, dst_sharding)


def _level(name: str):
    level = getattr(_flags, name)
    if level is None and name in _flags.__dict__:  # a block set None: the global value
        level = getattr(type(_flags), name)
    return level


def _apply(name: str, direction: str, describe):
    level = _level(name)
    if level is None or level == "allow":
        return
    if _scope.explicit:
        if level in ("log", "disallow"):
            return
        level = level[:-len("_explicit")]
    elif level.endswith("_explicit"):
        level = level[:-len("_explicit")]
    if level == "log":
        _logger.warning("%s transfer: %s", direction, describe())
    else:
        raise xla.RuntimeErrorType(
            f"INVALID_ARGUMENT: Disallowed {direction} transfer: {describe()}")


def host_to_device(aval, dst_sharding):
    """Guards sending a host value of ``aval`` to ``dst_sharding`` (a callable giving the
    destination's sharding, built only for a message)."""
    if _flags.transfer_guard_host_to_device is None and not _flags.local_blocks:
        return
    if _scope.through:
        return
    _apply("transfer_guard_host_to_device", "host-to-device",
           lambda: f"aval={aval!r}, dst_sharding={dst_sharding()!r}")


def device_to_device(aval, src_sharding, dst_sharding):
    """Guards moving an array of ``aval`` from ``src_sharding`` (None: not named, as in
    JAX's messages for ``device_put``) to ``dst_sharding``."""
    if _flags.transfer_guard_device_to_device is None and not _flags.local_blocks:
        return
    from traxla.runtime.placement import public_sharding  # (placement imports this module)
    _apply("transfer_guard_device_to_device", "device-to-device",
           lambda: f"aval={aval!r}, "
                   + ("" if src_sharding is None else f"sharding={src_sharding!r}, ")
                   + f"dst_sharding={public_sharding(dst_sharding())!r}")


def device_to_host(shape, dtype, device):
    """Guards reading an array back from ``device()`` (CPU arrays are read in place: no
    transfer, as in JAX)."""
    if _flags.transfer_guard_device_to_host is None and not _flags.local_blocks:
        return
    if _scope.through:
        return
    device = device()
    if device.platform == "cpu":
        return
    _apply("transfer_guard_device_to_host", "device-to-host",
           lambda: f"shape=({','.join(map(str, shape))}), dtype={dtype}, device={device!r}")
