"""``jax.interpreters.pxla``: JAX's sharded-computation internals (``create_compile_options``
and names deprecated since JAX 0.8.2: ``MeshExecutable``, ...). traxla compiles and runs
sharded programs its own way and provides most of them not; the module exists so that code
importing it (orbax) loads, and each such name raises an error that says so when used. The
result handlers (``global_result_handlers``, ``global_aval_to_result_handler``,
``global_avals_to_results_handler``: an Array from its per-device shards, which flax's and
orbax's extended dtypes and plugin programs use) are JAX's. ``thread_resources`` is JAX's: ``thread_resources.env.physical_mesh`` is the
mesh of the innermost legacy ``with mesh:`` block, else the empty mesh (drjax, tunix)."""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from traxla.ir.avals import ShapedArray as _ShapedArray
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
    "mesh_sharding_specs", "shard_args", "spec_to_indices",
    "thread_resources", "Mesh", "ArrayMapping", "array_mapping_to_axis_resources",
    "PartitionSpec", "NamedSharding", "op_sharding_to_indices"})


# -- result handlers: an Array of ``aval`` laid out by ``sharding`` from its shards ----------

def _array_result_handler(aval, sharding, committed):
    """JAX's handler of a ShapedArray result: its per-device arrays (in the order of
    ``sharding``'s devices) to one Array."""
    from traxla.api.environment import make_array_from_single_device_arrays
    shape, dtype = tuple(aval.shape), aval.dtype

    def handler(bufs):
        return make_array_from_single_device_arrays(shape, sharding, list(bufs), dtype=dtype)
    return handler


# (JAX's jax._src.interpreters.pxla.global_result_handlers: aval type -> handler maker)
_global_result_handlers = {_ShapedArray: _array_result_handler}


class ResultsHandler:
    """JAX's ``ResultsHandler``: one handler per output; called with each output's shards."""

    def __init__(self, handlers, out_shardings, out_avals):
        self.handlers, self.out_shardings, self.out_avals = handlers, out_shardings, out_avals

    def __call__(self, out_bufs):
        return [h(bufs) for h, bufs in zip(self.handlers, out_bufs)]


def _global_aval_to_result_handler(aval, out_sharding, committed):
    try:
        return _global_result_handlers[type(aval)](aval, out_sharding, committed)
    except KeyError as err:
        raise TypeError(f"No pxla_result_handler for type: {type(aval)}") from err


def _global_avals_to_results_handler(global_out_avals, shardings, committed):
    handlers = [_global_aval_to_result_handler(a, s, committed)
                for a, s in zip(global_out_avals, shardings)]
    return ResultsHandler(handlers, shardings, global_out_avals)


def _deprecated(name, value):
    warnings.warn(f"jax.interpreters.pxla.{name} is deprecated as of JAX v0.8.2.",
                  DeprecationWarning, stacklevel=3)
    return value


def __getattr__(name):
    if name == "global_result_handlers":
        return _deprecated(name, _global_result_handlers)
    if name == "global_aval_to_result_handler":
        return _deprecated(name, _global_aval_to_result_handler)
    if name == "global_avals_to_results_handler":
        return _deprecated(name, _global_avals_to_results_handler)
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
