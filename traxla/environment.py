"""Devices and processes as the top level of ``jax`` reports them: ``device_count``,
``local_device_count``, ``process_index``/``process_count``/``process_indices``,
``device_get`` and ``live_arrays``."""
from __future__ import annotations

import gc

import numpy as np

from . import tree_util
from .runtime import Array
from .runtime import xla_adapter as _xla
from .runtime.backend import get_backend
from .tracer import Tracer


def device_count(backend: str | None = None) -> int:
    """The number of devices of ``backend`` (the default one) over all processes."""
    return len(get_backend(backend).devices)


def local_device_count(backend: str | None = None) -> int:
    """The number of devices of ``backend`` this process can address."""
    return len(get_backend(backend).local_devices)


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of a distributed run (0 when alone)."""
    get_backend(backend)
    return _xla.process_index()


def process_count(backend: str | None = None) -> int:
    """The number of processes of a distributed run (1 when alone)."""
    get_backend(backend)
    return _xla.process_count()


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes: ``list(range(process_count()))``."""
    return list(range(process_count(backend)))


def device_get(x):
    """Fetches ``x`` (a pytree) to the host: Arrays become NumPy arrays, other leaves
    are returned as they are. A traced value cannot be fetched."""
    def get(leaf):
        if isinstance(leaf, Tracer):
            return np.asarray(leaf)  # raises TracerArrayConversionError with JAX's message
        if isinstance(leaf, Array):
            return np.asarray(leaf)
        return leaf
    return tree_util.tree_map(get, x)


def live_arrays(platform: str | None = None) -> list:
    """All Arrays alive (not deleted) on ``platform``'s devices (the default backend)."""
    wanted = get_backend(platform).platform
    gc.collect()
    found = []
    for obj in gc.get_objects():
        if type(obj) is Array and not obj.is_deleted():
            if get_backend().platform == wanted:
                found.append(obj)
    return found


__all__ = ["device_count", "local_device_count", "process_index", "process_count",
           "process_indices", "device_get", "live_arrays"]
