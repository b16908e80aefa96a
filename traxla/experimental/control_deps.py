"""``jax.experimental.control_deps``: not supported by traxla, which does not have control
dependencies between effects (jax.experimental.control_deps). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

import traxla as jax

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'control dependencies between effects (jax.experimental.control_deps)'
_fill(globals(), _CAPABILITY,
    functions='control_dep schedule')
