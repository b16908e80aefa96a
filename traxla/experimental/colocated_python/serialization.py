"""``jax.experimental.colocated_python.serialization``: what ships a colocated function
to its host. As JAX's, it is cloudpickle (without it installed, JAX's
``ModuleNotFoundError``), with meshes, shardings and device lists reduced to CPU device
ids and looked up again on the receiving side (``_get_cpu_device_map``)."""
from __future__ import annotations

import collections
import functools
import io

import numpy as np

from traxla.runtime.backend import devices as _devices
from traxla.runtime.placement import Mesh, NamedSharding, SingleDeviceSharding


class DeviceList(tuple):
    """An ordered list of devices (what a colocated function's specialization names)."""


def _get_cpu_device_map() -> dict:
    """The CPU devices by id."""
    out: dict = {}
    for d in _devices("cpu"):
        if d.id in out:
            raise ValueError(f"Multiple CPU devices with id {d.id} found: {out[d.id]} and {d}")
        out[d.id] = d
    return out


def _lookup_cpu_device(cpu_device_map, device_id):
    d = cpu_device_map.get(device_id)
    if d is None:
        raise ValueError(f"Invalid device ID {device_id}. Device list must contain only CPU "
                         "devices.")
    return d


def _reduce_mesh(mesh):
    ids = np.vectorize(lambda d: d.id, otypes=[int])(mesh.devices)
    return _unreduce_mesh, (ids, mesh.axis_names, mesh.axis_types)


def _unreduce_mesh(mesh_device_ids, axis_names, axis_types):
    lookup = functools.partial(_lookup_cpu_device, _get_cpu_device_map())
    return Mesh(np.vectorize(lookup, otypes=[object])(mesh_device_ids), axis_names, axis_types)


def _reduce_named_sharding(sharding):
    return _unreduce_named_sharding, (_reduce_mesh(sharding.mesh), sharding.spec,
                                      sharding.memory_kind)


def _unreduce_named_sharding(reduced_mesh, spec, memory_kind):
    return NamedSharding(reduced_mesh[0](*reduced_mesh[1]), spec, memory_kind)


def _reduce_device_list(device_list):
    return _unreduce_device_list, ([d.id for d in device_list],)


def _unreduce_device_list(device_ids):
    cpu = _get_cpu_device_map()
    return DeviceList(_lookup_cpu_device(cpu, i) for i in device_ids)


def _reduce_single_device_sharding(sharding):
    return _unreduce_single_device_sharding, (sharding.device.id, sharding.memory_kind)


def _unreduce_single_device_sharding(device_id, memory_kind):
    return SingleDeviceSharding(_lookup_cpu_device(_get_cpu_device_map(), device_id))


def _cloudpickle():
    try:
        import cloudpickle
    except ImportError:
        raise ModuleNotFoundError('No module named "cloudpickle"') from None
    return cloudpickle


def _serialize(obj) -> bytes:
    """``obj`` as the bytes shipped to the colocated host (JAX's serialization). The
    reducers are looked up at each call, so a replaced one (as orbax does) is used."""
    cloudpickle = _cloudpickle()
    table = collections.ChainMap(
        {Mesh: lambda m: _reduce_mesh(m), NamedSharding: lambda s: _reduce_named_sharding(s),
         DeviceList: lambda d: _reduce_device_list(d),
         SingleDeviceSharding: lambda s: _reduce_single_device_sharding(s)},
        cloudpickle.CloudPickler.dispatch_table)

    class _Pickler(cloudpickle.Pickler):
        dispatch_table = table

    with io.BytesIO() as f:
        _Pickler(f).dump(obj)
        return f.getvalue()


def _deserialize(data: bytes):
    return _cloudpickle().loads(data)


# The other names of JAX's module (mostly its imports), as JAX's
try:
    import cloudpickle
except ImportError:
    cloudpickle = None
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
import base64
import threading
import traxla as jax
import traxla._src.api as api
import traxla._src.tree_util as tree_util
import traxla._src.util as util
import traxla._src.xla_bridge as xb
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's IFRT internals of colocated Python (traxla implements its API its own way)",
      modules='xc')
