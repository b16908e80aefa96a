"""Devices and processes as the top level of ``jax`` reports them: ``device_count``,
``local_device_count``, ``process_index``/``process_count``/``process_indices``,
``device_get`` and ``live_arrays``."""
from __future__ import annotations

import gc

import numpy as np

import platform
import sys
import textwrap

from traxla.version import __version__
from traxla import tree_util
from traxla.runtime import ArrayImpl, transfer_guard
from traxla.runtime.xla_adapter import clients as _xla
from traxla.runtime.backend import get_backend
from traxla.tracer import Tracer
from traxla.ir.dtypes import canonicalize
from traxla.api import device_put


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
        if isinstance(leaf, ArrayImpl):
            return np.asarray(leaf)
        return leaf
    with transfer_guard.explicit():  # an explicit transfer for the transfer guards
        return tree_util.tree_map(get, x)


def live_arrays(platform: str | None = None) -> list:
    """All Arrays alive (not deleted) on ``platform``'s devices (the default backend)."""
    wanted = get_backend(platform).platform
    gc.collect()
    found = []
    for obj in gc.get_objects():
        if type(obj) is ArrayImpl and not obj.is_deleted():
            if get_backend().platform == wanted:
                found.append(obj)
    return found


__all__ = ["device_count", "local_device_count", "process_index", "process_count",
           "process_indices", "device_get", "live_arrays"]


# -- the deprecated host_* spellings JAX still exports -------------------------------------

def host_id(backend: str | None = None) -> int:
    """The old name of ``process_index``."""
    return process_index(backend)


def host_count(backend: str | None = None) -> int:
    """The old name of ``process_count``."""
    return process_count(backend)


def host_ids(backend: str | None = None) -> list[int]:
    """The old name of ``process_indices``."""
    return process_indices(backend)


def copy_to_host_async(x):
    """Starts copying the Arrays of ``x`` (a pytree) to the host; ``np.asarray`` then
    finds the values there. (The CPU client copies synchronously.)"""
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, ArrayImpl) and leaf._placement is None and not leaf.is_deleted():
            leaf._value()
    return x


def print_environment_info(return_string: bool = False):
    """Versions of traxla, jaxlib, NumPy and Python, and the devices, as JAX prints them."""
    backend = get_backend()
    info = textwrap.dedent(f"""\
    traxla:    {__version__}
    jaxlib:    {_xla.JAXLIB_VERSION}
    numpy:     {np.__version__}
    python:    {sys.version}
    device info: {backend.devices[0].device_kind}-{len(backend.devices)}, {len(backend.local_devices)} local devices
    process_count: {process_count()}
    platform: {platform.uname()}
    """)
    if return_string:
        return info
    print(info)


# -- arrays assembled from per-device blocks -------------------------------------------------

def _global_from_blocks(shape, sharding, block_for):
    blocks = [(index, np.asarray(block_for(device, index)))
              for device, index in sharding.devices_indices_map(tuple(shape)).items()]
    dtype = canonicalize(blocks[0][1].dtype) if blocks else np.dtype("float32")
    host = np.zeros(tuple(shape), dtype)
    for index, block in blocks:
        want = host[index].shape
        if block.shape != want:
            raise ValueError(f"A block for index {index} has shape {block.shape}; the sharding "
                             f"gives blocks of shape {want}.")
        host[index] = block
    return host


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An Array of ``shape`` laid out by ``sharding``, each device's block given by
    ``data_callback(index)`` (``index``: a tuple of slices into the global array)."""
    host = _global_from_blocks(shape, sharding, lambda device, index: data_callback(index))
    if dtype is not None:
        host = host.astype(dtype)
    return device_put(host, sharding)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An Array of ``shape`` laid out by ``sharding`` from one Array per device, in the
    order of ``sharding.devices_indices_map(shape)``."""
    arrays = list(arrays)
    devices = list(sharding.devices_indices_map(tuple(shape)))
    if len(arrays) != len(devices):
        raise ValueError(f"make_array_from_single_device_arrays got {len(arrays)} arrays for a "
                         f"sharding over {len(devices)} devices.")
    by_device = dict(zip(devices, arrays))
    host = _global_from_blocks(shape, sharding, lambda device, index: by_device[device])
    return device_put(host.astype(dtype) if dtype is not None else host, sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """An Array laid out by ``sharding`` from this process's data; with one process the
    local data is the whole array."""
    local = np.asarray(local_data)
    if process_count() != 1:
        raise NotImplementedError("make_array_from_process_local_data over several processes: "
                                  "assemble the global array with make_array_from_callback.")
    if global_shape is not None and tuple(global_shape) != local.shape:
        raise ValueError(f"global_shape {tuple(global_shape)} differs from the local data's "
                         f"shape {local.shape} in a single-process run.")
    return device_put(local, sharding)
