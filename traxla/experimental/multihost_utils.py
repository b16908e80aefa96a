"""``traxla.experimental.multihost_utils``: collectives across processes, as
``jax.experimental.multihost_utils``. traxla runs one process: broadcasting returns the
caller's data, gathering stacks (or tiles) it once, and the barrier has no one to wait for;
the local <-> global conversions place the data on the mesh (one process's local data is
the whole global value); with more than one process these raise NotImplementedError.
``live_devices`` asks the distributed runtime which processes are alive."""
from __future__ import annotations

import contextlib
import math
import zlib
from typing import Any

import numpy as np

from traxla.api.device_arrays import device_put
from traxla.api.environment import process_count, process_index
from traxla.api.jit_sharding import flatten_axis_resources
from traxla.api.pmap import IndivisibleError
from traxla.ir import dtypes
from traxla.ir.rules.multihost import (global_array_to_host_local_array_p,
                                       host_local_array_to_global_array_p)
from traxla.runtime import ArrayImpl, dispatch as _dispatch
from traxla.runtime.xla_adapter import clients as _xla
from traxla.runtime.placement import NamedSharding
from traxla.tree_util import tree_map, tree_flatten, tree_unflatten
from traxla.numpy import asarray


def _one_process(what: str) -> None:
    if process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{what}: traxla runs collectives across "
                                  f"one process only; this job has {process_count()}")


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's ``in_tree`` on every process (here: the caller's, as arrays)."""
    _one_process("broadcast_one_to_all")
    return tree_map(asarray, in_tree)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """NumPy arrays of every process's leaves, stacked on a new axis 0 (``tiled``:
    concatenated along axis 0)."""
    _one_process("process_allgather")

    def gather(x):
        x = np.asarray(x)
        return np.expand_dims(x, 0) if x.ndim == 0 or not tiled else x
    return tree_map(gather, in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raises AssertionError unless every process holds the same values."""
    out = process_allgather(in_tree, tiled=True)

    def expected(x):
        x = np.asarray(x)
        return np.concatenate([np.expand_dims(x, 0) if x.ndim == 0 else x] * process_count())
    for got, want in zip(tree_flatten(out)[0], tree_flatten(tree_map(expected, in_tree))[0]):
        if not np.array_equal(got, want):
            raise AssertionError(f"{fail_message} Expected: {want}; got: {got}.")


def sync_global_devices(name: str) -> None:
    """A barrier across processes (checks every process reached the same ``name``)."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process reached the step at which to save a checkpoint after a
    preemption notice (JAX's preemption service). Outside a distributed job: False."""
    if _xla.distributed_client() is None:
        return False
    # traxla starts no preemption sync manager (JAX's, behind jax_enable_preemption_service)
    raise RuntimeError("Preemption sync manager has not been initialized. Make sure the "
                       "'jax_enable_preemption_service' config is enabled.")


_PSPEC_NONE = ("`None` is not a valid input to the pspecs argument. Please use "
               "jax.sharding.PartitionSpec() if you wanted to replicate your input.")


def _convert(prim, what, inputs, global_mesh, pspecs):
    _one_process(prim.name)
    flat, treedef = tree_flatten(inputs)
    specs = flatten_axis_resources(what, treedef, pspecs)
    return tree_unflatten(treedef, [prim.bind(x, global_mesh=global_mesh, pspec=spec)
                                    for x, spec in zip(flat, specs)])


def host_local_array_to_global_array(local_inputs: Any, global_mesh, pspecs: Any):
    """A pytree of host-local values as global Arrays laid out on ``global_mesh`` by
    ``pspecs`` (a pytree prefix of PartitionSpecs). Under ``jit``, a
    ``host_local_array_to_global_array`` equation (the operand itself once lowered)."""
    return _convert(host_local_array_to_global_array_p, "input pspecs", local_inputs,
                    global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs: Any, global_mesh, pspecs: Any):
    """A pytree of global Arrays as this process's host-local Arrays (its part of each
    value by ``pspecs``)."""
    return _convert(global_array_to_host_local_array_p, "output pspecs", global_inputs,
                    global_mesh, pspecs)


def _host_value(arr):
    if not hasattr(arr, "shape"):
        arr = np.array(arr)
    if not isinstance(arr, ArrayImpl):
        arr = np.asarray(arr, dtypes.canonicalize(arr.dtype))
    return arr


def _check_divisible(sharding, shape):
    """JAX's IndivisibleError for a shape the sharding cannot split evenly."""
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.devices.shape))
    spec = tuple(sharding.spec) + (None,) * (len(shape) - len(sharding.spec))
    partitions = [math.prod(sizes[a] for a in (e if isinstance(e, tuple) else (e,))
                            if a is not None) for e in spec[:len(shape)]]
    for dim, (size, p) in enumerate(zip(shape, partitions)):
        if size % p:
            raise IndivisibleError(
                f"Sharding {sharding} implies that array axis {dim} is partitioned {p} "
                f"times, but the dimension size is {size} (full shape: {tuple(shape)}, "
                f"per-dimension tiling factors: {partitions} should evenly divide the shape)")


def _local_to_global_impl(arr, *, global_mesh, pspec):
    if pspec is None:
        raise ValueError(_PSPEC_NONE)
    arr = _host_value(arr)
    sharding = NamedSharding(global_mesh, pspec)
    _check_divisible(sharding, arr.shape)
    if isinstance(arr, ArrayImpl) and arr.committed and arr.sharding == sharding:
        return arr  # already laid out so: no copy, as JAX reuses the shards
    return device_put(arr, sharding)


def _global_to_local_impl(arr, *, global_mesh, pspec):
    if pspec is None:
        raise ValueError(_PSPEC_NONE)
    if isinstance(arr, ArrayImpl):  # in one process every Array is fully addressable
        return arr
    arr, sharding = _host_value(arr), NamedSharding(global_mesh, pspec)
    _check_divisible(sharding, arr.shape)
    return device_put(arr, sharding)


_dispatch.eager_impls[host_local_array_to_global_array_p] = _local_to_global_impl
_dispatch.eager_impls[global_array_to_host_local_array_p] = _global_to_local_impl


class ProcessFailureError(Exception):
    """Raised by live_devices when one or more processes have failed.

    Attributes:
      failed_devices: A set of devices whose processes failed.
    """

    def __init__(self, failed_devices: set):
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


def _live_devices(devices) -> dict:
    process_ids = {d.process_index for d in devices}
    if process_index() not in process_ids:
        raise ValueError("Provided devices do not have any local devices.")
    live = _xla.live_processes(sorted(process_ids))
    return {d: live[d.process_index] for d in devices if d.process_index in live}


class _LiveDevices:
    """``with live_devices(devices) as alive:`` — the devices of ``devices`` whose processes
    are alive (every process agrees: the distributed runtime answers); a process that dies
    or restarts during the block makes it raise ProcessFailureError, as JAX's."""

    def __init__(self):
        self.devices = None

    @contextlib.contextmanager
    def __call__(self, devices):
        if _xla.distributed_client() is None:
            raise RuntimeError("Distributed JAX not initialized.")
        if not devices:
            raise ValueError("No devices provided.")
        if self.devices is None:
            self.devices = _live_devices(devices)
        exception = None
        try:
            yield sorted(self.devices, key=lambda d: d.id)
        except Exception as e:  # noqa: BLE001  (re-raised below, after the liveness check)
            exception = e
        finally:
            old, new = self.devices, _live_devices(devices)
            self.devices = new
            failed = {d for d in old if d not in new or new[d] != old[d]}
            if failed:
                raise ProcessFailureError(failed) from exception
            if exception:
                raise exception


live_devices = _LiveDevices()


__all__ = ["assert_equal", "broadcast_one_to_all", "process_allgather", "sync_global_devices",
           "reached_preemption_sync_point", "host_local_array_to_global_array",
           "global_array_to_host_local_array", "host_local_array_to_global_array_p",
           "global_array_to_host_local_array_p", "ProcessFailureError", "live_devices"]


# The other names of JAX's module (mostly its imports), as JAX's
from functools import lru_cache
from functools import partial
from traxla.base.sequences import safe_zip
from traxla.ir.sharding import PartitionSpec as P
import traxla as jax
import traxla._src.core as core
import traxla._src.distributed as distributed
import traxla._src.interpreters.ad as ad
import traxla._src.interpreters.pxla as pxla
import traxla._src.pjit as pjit_lib
import traxla._src.xla_bridge as xla_bridge
import traxla.interpreters.batching as batching
import traxla.interpreters.mlir as mlir
import traxla.numpy as jnp
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), ("JAX's internal machinery of jax.experimental.multihost_utils (traxla "
                  "implements its API its own way)"),
      functions=('global_array_to_host_local_array_impl gtl_abstract_eval '
      'host_local_array_to_global_array_impl ltg_abstract_eval ltg_batcher'),
      modules='array prng sharding_impls xla_client')
