"""``jax.experimental.serialize_executable``: not supported by traxla, which does not have
serialized compiled executables (jax.experimental.serialize_executable). The module imports
and its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""
from __future__ import annotations

from collections.abc import Sequence
import io
import pickle
import traxla as jax

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'serialized compiled executables (jax.experimental.serialize_executable)'
_fill(globals(), _CAPABILITY,
    functions='deserialize_and_load serialize',
    modules='xc')
