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
from traxla.tracer.traces import _bottom, set_current_trace


def _run_placed(prim, args, params):
    # The eager trace may be reached through a transformation's trace that forwarded the
    # operation (grad's routing of known values): the program runs from the eager trace.
    with set_current_trace(_bottom[0]):
        return _apply_placed(prim, [to_array(a) for a in args], params)


def _shard_map_eager(*args, **params):
    return _run_placed(shard_map_p, args, params)


def _jit_eager(*args, jaxpr, name):
    if _mesh_of_program(jaxpr.jaxpr) is None:
        return NotImplemented  # an ordinary program: the one-equation executable runs it
    return _run_placed(jit_p, args, dict(jaxpr=jaxpr, name=name))


dispatch.eager_impls[shard_map_p] = _shard_map_eager
if jit_p not in dispatch.eager_impls:
    dispatch.eager_impls[jit_p] = _jit_eager
