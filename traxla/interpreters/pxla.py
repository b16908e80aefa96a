"""``jax.interpreters.pxla``: JAX's sharded-computation internals (``create_compile_options``
and names deprecated since JAX 0.8.2: ``MeshExecutable``, result handlers, ...). traxla
compiles and runs sharded programs its own way and provides none of them; the module
exists so that code importing it (orbax) loads, and each name raises an error that says
so when used. ``thread_resources`` is JAX's: ``thread_resources.env.physical_mesh`` is the
mesh of the innermost legacy ``with mesh:`` block, else the empty mesh (drjax, tunix)."""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from traxla.ir.sharding import AbstractMesh as _AbstractMesh
from traxla.runtime.placement import Mesh as _Mesh, legacy_meshes as _legacy_meshes


class ResourceEnv(NamedTuple):
    """JAX's ``ResourceEnv``: the physical mesh of a legacy ``with mesh:`` block."""
    physical_mesh: _Mesh

    @property
    def physical_resource_axes(self):
        return set(self.physical_mesh.axis_names)

    resource_axes = physical_resource_axes

    @property
    def shape(self):
        return self.physical_mesh.shape


def _empty_env():
    ever = _AbstractMesh.ever_created  # the empty mesh is no user mesh: the flag stays (a
    env = ResourceEnv(_Mesh(np.empty((), dtype=object), ()))  # jit then skips mesh searches)
    _AbstractMesh.ever_created = ever
    return env


_EMPTY_ENV = _empty_env()


class _ThreadResources:
    """JAX's ``thread_resources``: ``.stack`` (of ResourceEnv, the empty one first) and
    ``.env`` (its top) of the calling thread's ``with mesh:`` blocks."""

    @property
    def stack(self):
        return [_EMPTY_ENV] + [ResourceEnv(m) for m in _legacy_meshes]

    @property
    def env(self):
        return ResourceEnv(_legacy_meshes[-1]) if len(_legacy_meshes) else _EMPTY_ENV


_thread_resources = _ThreadResources()

_JAX_NAMES = frozenset({
    "create_compile_options", "Index", "MeshAxisName", "MeshComputation", "MeshExecutable",
    "global_aval_to_result_handler", "global_avals_to_results_handler",
    "global_result_handlers", "mesh_sharding_specs", "shard_args", "spec_to_indices",
    "thread_resources", "Mesh", "ArrayMapping", "array_mapping_to_axis_resources",
    "PartitionSpec", "NamedSharding", "op_sharding_to_indices"})


def __getattr__(name):
    if name == "thread_resources":
        warnings.warn("jax.interpreters.pxla.thread_resources is deprecated as of JAX v0.8.2. "
                      "Please switch to using `with jax.set_mesh(mesh)` instead of `with mesh:` "
                      "and then use `jax.sharding.get_abstract_mesh()` to get the current mesh.",
                      DeprecationWarning, stacklevel=2)
        return _thread_resources
    if name in _JAX_NAMES:
        raise AttributeError(f"traxla does not implement jax.interpreters.pxla.{name} "
                             "(JAX's internal sharded-execution machinery)")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
