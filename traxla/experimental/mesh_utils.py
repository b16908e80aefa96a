"""``traxla.experimental.mesh_utils``: device arrays for ``jax.sharding.Mesh``
(``jax.experimental.mesh_utils``). traxla's devices are CPU and GPU devices, laid out in the
order JAX gives them (GPUs sorted by id); there is no TPU torus to fold."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from traxla.runtime import devices as _devices


def _canonicalize_axis_sizes(axis_sizes):
    try:
        return tuple(int(s) for s in axis_sizes)
    except (TypeError, ValueError):
        return None


# JAX's registry of mesh builders for a device kind (``device.device_kind``): a handler
# ``(mesh_shape, devices, contiguous_submeshes=...)`` returning the device array, or None
# to leave it to the default layout. JAX's own entries fold TPU generations' tori; traxla
# has none of its own, and honours those a user registers.
device_kind_handler_dict: dict = {}


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """A ``mesh_shape`` array of ``devices`` (default: all devices)."""
    del allow_split_physical_axes  # no physical topology to respect
    if devices is None:
        devices = _devices()
    new_shape = _canonicalize_axis_sizes(mesh_shape)
    if new_shape is None:
        raise ValueError("`mesh_shape` passed to `create_device_mesh` should be a sequence of"
                         f" ints. Got {mesh_shape}")
    if math.prod(new_shape) != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product "
                         f"of mesh_shape {new_shape}")
    handler = device_kind_handler_dict.get(devices[-1].device_kind)
    if handler is not None:
        result = handler(new_shape, devices, contiguous_submeshes=contiguous_submeshes)
        if result is not None:
            return result
    devices = list(devices)
    if devices[-1].platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    out = np.empty(len(devices), dtype=object)
    out[:] = devices
    return out.reshape(new_shape)


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh of ``mesh_shape * dcn_mesh_shape`` with one granule (process) per DCN slot."""
    if devices is None:
        devices = _devices()
    granules = {}
    for d in devices:
        granules.setdefault(d.process_index, []).append(d)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    if math.prod(dcn_mesh_shape) != len(keys):
        raise ValueError(f"Number of slices {len(keys)} must equal the product of "
                         f"dcn_mesh_shape {tuple(dcn_mesh_shape)}")
    if len(keys) != 1:
        raise NotImplementedError("create_hybrid_device_mesh: traxla lays out one process's "
                                  f"devices; got devices of {len(keys)} processes")
    shape = tuple(a * b for a, b in zip(mesh_shape, dcn_mesh_shape))
    return create_device_mesh(shape, granules[keys[0]])


__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]
