"""``jax.experimental.topologies``: not supported by traxla, which does not have compiling for
a device topology without its devices (jax.experimental.topologies). The module imports and
its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""
from __future__ import annotations

from collections.abc import Sequence
from traxla import Device
import traxla as jax
import traxla._src.xla_bridge as xb
import traxla.experimental.mesh_utils as mesh_utils

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'compiling for a device topology without its devices (jax.experimental.topologies)'
_fill(globals(), _CAPABILITY,
    functions='get_attached_topology get_topology_desc make_mesh',
    classes='TopologyDescription')
