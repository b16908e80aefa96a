"""Eager ``shard_map`` and ``jit`` equations whose program names a mesh: run as a cached
``jit`` (an SPMD program over that mesh, partitioned by Shardy), not as a one-equation
executable on one device, which cannot hold the manual computation. They are bound
eagerly when a ``shard_map`` or ``pmap`` runs under ``vmap`` outside any ``jit``."""
from __future__ import annotations

from traxla.api.jit_function import _apply_placed
from traxla.api.jit_sharding import _mesh_of_program
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.collectives import shard_map_p
from traxla.runtime import dispatch, to_array


def _shard_map_eager(*args, **params):
    return _apply_placed(shard_map_p, [to_array(a) for a in args], params)


def _jit_eager(*args, jaxpr, name):
    if _mesh_of_program(jaxpr.jaxpr) is None:
        return NotImplemented  # an ordinary program: the one-equation executable runs it
    return _apply_placed(jit_p, [to_array(a) for a in args], dict(jaxpr=jaxpr, name=name))


dispatch.eager_impls[shard_map_p] = _shard_map_eager
if jit_p not in dispatch.eager_impls:
    dispatch.eager_impls[jit_p] = _jit_eager
