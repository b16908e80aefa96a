"""``traxla.sharding``: meshes, partition specs and named shardings; under
Explicit mesh axes, placement is part of the type."""
from __future__ import annotations


import abc

import numpy as np

from traxla.ir import sharding as _ir_sharding
from traxla.ir.sharding import AbstractDevice, AbstractMesh, AxisType, PartitionSpec
from traxla.ir.avals import ManualAxisType  # (mujoco-mjx's warp FFI outputs)
from traxla.runtime.backend import devices as _devices
from traxla.runtime.placement import (HloPlacement, Mesh, NamedSharding, SingleDeviceSharding,
                                      _mesh_stack, _pop_mesh, _push_mesh, _truncate_meshes,
                                      get_mesh)
from traxla import tree_util
import traxla.api as _api
from traxla.ir.rules.collectives import reshard_p
from traxla.tracer import EvalTrace, traces as trace_core
from traxla.sharding.shard_map import _concrete_meshes

P = PartitionSpec


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
    """A mesh over the first ``prod(axis_shapes)`` devices, row-major."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    n = int(np.prod(axis_shapes))
    devices = list(_devices() if devices is None else devices)
    if len(devices) < n:
        raise ValueError(f"make_mesh needs {n} devices for axis shapes {axis_shapes}, but only "
                         f"{len(devices)} are available (set traxla.config.update("
                         f"'num_cpu_devices', {n}) before first use of the backend).")
    grid = np.empty(n, dtype=object)
    grid[:] = devices[:n]
    if axis_types is None:  # JAX 0.10: make_mesh's axes are Explicit unless told otherwise
        axis_types = (AxisType.Explicit,) * len(axis_shapes)
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types)


def _empty_mesh() -> AbstractMesh:
    ever = AbstractMesh.ever_created  # the empty mesh is no user mesh: the flag stays
    mesh = AbstractMesh((), ())
    AbstractMesh.ever_created = ever
    return mesh


_EMPTY_MESH = _empty_mesh()


def get_abstract_mesh():
    """The abstract mesh of the mesh context; outside one, the empty mesh (``.empty``)."""
    mesh = get_mesh()
    return _EMPTY_MESH if mesh is None else mesh.abstract_mesh


class set_mesh:
    """Makes ``mesh`` the context for ``P`` specs (``out_sharding=P(...)``, ``reshard``,
    ``shard_map`` without ``mesh=``). As JAX's: ``with set_mesh(mesh):`` sets it for the
    block; a bare ``set_mesh(mesh)`` call sets it until the next one."""

    def __init__(self, mesh: Mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"set_mesh expects a Mesh; got {type(mesh).__name__}")
        self.mesh = mesh
        self._depth = len(_mesh_stack)
        _push_mesh(mesh)

    def __enter__(self):
        return self.mesh

    def __exit__(self, *exc):
        _truncate_meshes(self._depth)


class Sharding(abc.ABC):
    """What every sharding is (``isinstance(x.sharding, Sharding)``): NamedSharding,
    SingleDeviceSharding and the placements XLA chooses are registered with it."""


for _cls in (NamedSharding, SingleDeviceSharding, HloPlacement):
    Sharding.register(_cls)


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """The sharding that puts a whole array on ``device``."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def to_named(sharding_or_spec):
    """A NamedSharding for a sharding or a spec resolved against the current mesh; one on
    an abstract mesh (``jax.typeof(x).sharding``, flax's metadata) is placed on the mesh
    of the context when that mesh has the same shape, as JAX resolves it."""
    if isinstance(sharding_or_spec, NamedSharding):
        if isinstance(sharding_or_spec.mesh, AbstractMesh):
            mesh = get_mesh()
            if mesh is not None and mesh.abstract_mesh == sharding_or_spec.mesh:
                return NamedSharding(mesh, sharding_or_spec.spec, sharding_or_spec.memory_kind)
        return sharding_or_spec
    if isinstance(sharding_or_spec, HloPlacement):  # (extend.sharding.GSPMDSharding too)
        return sharding_or_spec.as_named()
    mesh = get_mesh()
    if mesh is None:
        raise ValueError("Using PartitionSpec when you are not under a mesh context is not "
                         "allowed. Please pass a NamedSharding instance or enter into a mesh "
                         f"context via `jax.set_mesh`. Got {sharding_or_spec}")
    spec = sharding_or_spec if isinstance(sharding_or_spec, PartitionSpec) else PartitionSpec(*sharding_or_spec)
    return NamedSharding(mesh, spec)


def reshard(xs, out_shardings):
    """``xs`` (a pytree) laid out as ``out_shardings`` (a NamedSharding or a P on the
    current mesh, or a pytree prefix of them); under Explicit axes this changes the type."""

    def one(leaf, sharding_or_spec):
        named = to_named(sharding_or_spec)
        if type(trace_core._state.trace) is EvalTrace:
            return _api.device_put(leaf, named)
        ndim = len(leaf.shape)
        _concrete_meshes[named.mesh.abstract_mesh] = named.mesh
        return reshard_p.bind(leaf, dst_sharding=named.aval_sharding(ndim),
                              dst_spec=(named.mesh.abstract_mesh, named.full_spec(ndim)))
    if isinstance(out_shardings, (NamedSharding, PartitionSpec)):
        return tree_util.tree_map(lambda leaf: one(leaf, out_shardings), xs)
    leaves, tree = tree_util.tree_flatten(xs)
    shardings = tree_util.broadcast_prefix(out_shardings, xs,
                                           is_leaf=lambda s: isinstance(s, PartitionSpec))
    return tree_util.tree_unflatten(tree, [one(x, s) for x, s in zip(leaves, shardings)])


def type_sharding(sharding_or_spec, ndim):
    """The ir-level sharding type that an ``out_sharding`` argument denotes."""
    return to_named(sharding_or_spec).aval_sharding(ndim)


__all__ = ["Sharding", "make_single_device_sharding", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "P", "SingleDeviceSharding",
           "HloPlacement", "AbstractMesh", "make_mesh", "set_mesh", "get_mesh",
           "get_abstract_mesh", "reshard", "ManualAxisType", "AbstractDevice"]
del _ir_sharding


from traxla.sharding.axes import auto_axes, explicit_axes, use_abstract_mesh  # noqa: E402,F401
