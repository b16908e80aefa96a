"""Arrays and devices: ``device_put`` (onto the default device, or laid out by a sharding),
``block_until_ready``, and ``typeof`` (an argument's aval, as ``jit`` sees it)."""
from __future__ import annotations

import contextlib

import numpy as np

from traxla import tree_util
from traxla.api.layouts import Format, sharding_of_format
from traxla.api.shape_dtype_struct import _is_abstract
from traxla.ir.avals import ShapedArray
from traxla.ir.memory_space import MemorySpace
from traxla.ir.pytype_registry import user_aval_fn
from traxla.ir.dtypes import canonicalize, float0
from traxla.ir.literals import float0_zeros
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.ir.rules.device_put import ArrayCopySemantics, device_put_p
from traxla.runtime import ArrayImpl, to_array, transfer_guard
from traxla.runtime import devices as _devices
from traxla.runtime.array import to_default_device
from traxla.runtime.placement import (Mesh, NamedSharding, SingleDeviceSharding, get_mesh,
                                      involves_unreduced, put_unreduced,
                                      pinned_placement,
                                      device_put_placed)
from traxla.sharding import to_named
from traxla.state import ref as _ref
from traxla.tracer import EvalTrace, Tracer
from traxla.tracer.traces import _state as _trace_state
from traxla.tracer.values import concrete_aval, hitype_avals


def _aval(x):
    if isinstance(x, (Tracer, ArrayImpl, _ref.Ref)):
        return x.aval
    if type(x) in hitype_avals:  # a hijax value (whose attribute reads it forwards)
        return hitype_avals[type(x)](x)
    if (fn := user_aval_fn(type(x))) is not None:  # JAX's core.pytype_aval_mappings
        return fn(x)
    if _is_abstract(x):  # a ShapeDtypeStruct (or any object with .shape and .dtype)
        return ShapedArray(tuple(x.shape), canonicalize(x.dtype),
                           bool(getattr(x, "weak_type", False)))
    return concrete_aval(x)


def _to_array_uncommitted(leaf):
    """``device_put(leaf)``: an Array where new arrays go, except that a mesh context
    (which commits new arrays to its mesh) leaves it on the default device, uncommitted,
    as JAX's."""
    arr = to_array(leaf)
    if arr.dtype == float0:  # no data: a host-side value, as JAX hands float0s back
        return float0_zeros(arr.shape)
    p = arr._placement
    if p is not None and p.committed and not isinstance(leaf, ArrayImpl):
        return to_default_device(np.asarray(arr), arr.aval.update(sharding=None))
    return arr


_NO_GUARD = contextlib.nullcontext()


def device_put(x, device=None):
    """Transfers ``x`` (a pytree) to the default device, or lays it out by a sharding
    (or a Format: its sharding, in the default layout traxla keeps). Its transfers are
    explicit ones for the transfer guards."""
    with transfer_guard.explicit():
        return _device_put(x, device)


def _memory_space_sharding(space, x):
    """``device_put(x, jax.memory.Space.X)``: that memory of the device ``x`` is on (its
    first array leaf's, else the default device)."""
    device = None
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, ArrayImpl) and len(leaf.devices()) == 1:
            device = next(iter(leaf.devices()))
            break
    if device is None:
        device = _devices()[0]
    return SingleDeviceSharding(device, memory_kind=space.memory_kind)


def _device_put(x, device):
    if isinstance(device, MemorySpace):
        device = _memory_space_sharding(device, x)
    if isinstance(device, Format):
        device = sharding_of_format(device)
    if isinstance(device, PartitionSpec):  # on the concrete mesh of set_mesh, as JAX's
        mesh = get_mesh()
        if not isinstance(mesh, Mesh):
            raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is "
                             "passed to device_put")
        device = NamedSharding(mesh, device)
    leaves, treedef = tree_util.tree_flatten(x)
    if type(_trace_state.trace) is not EvalTrace or any(isinstance(v, Tracer) for v in leaves):
        # staged as JAX stages it (constants too): one device_put equation over all the
        # leaves, each with the destination as given (a Device, a sharding or None)
        n = len(leaves)
        out = device_put_p.bind(*leaves, devices=(device,) * n, srcs=(None,) * n,
                                copy_semantics=(ArrayCopySemantics.REUSE_INPUT,) * n)
        return tree_util.tree_unflatten(treedef, out)
    if device is None:
        return tree_util.tree_map(_to_array_uncommitted, x)
    if isinstance(device, SingleDeviceSharding):  # in another memory: a one-device mesh
        device = device.device if device.memory_kind == "device" else device._as_named()
    sharding = device if isinstance(device, NamedSharding) else to_named(device) \
        if not hasattr(device, "_device") else None
    if sharding is not None and isinstance(sharding.mesh, AbstractMesh):
        sharding.is_fully_addressable  # JAX's ValueError: an abstract mesh names no devices
    if sharding is None:  # a Device: a one-device mesh, committed to it (as JAX's)
        sharding = pinned_placement(device)

    def put(leaf):
        arr = to_array(leaf)
        if arr.dtype == float0:
            return float0_zeros(arr.shape)
        if involves_unreduced(arr, sharding):
            return put_unreduced(arr, sharding)
        # an Array moves device to device (through the host), as the transfer guards see it
        with (transfer_guard.moving(arr, lambda: sharding, source=False)
              if isinstance(leaf, ArrayImpl) else _NO_GUARD):
            host = arr.physical_value()  # (a key's raw data)
            return device_put_placed(host, ShapedArray(arr.shape, arr.dtype,
                                                       arr.aval.weak_type), sharding)
    return tree_util.tree_map(put, x)


def typeof(x):
    return _aval(x)


def block_until_ready(x):
    for leaf in tree_util.tree_leaves(x):
        if isinstance(leaf, ArrayImpl):
            leaf.block_until_ready()
    return x
