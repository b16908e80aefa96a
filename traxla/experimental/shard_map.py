"""``jax.experimental.shard_map``: the legacy spelling of ``shard_map``, deprecated in JAX
0.8 and still shipped by JAX 0.10.2. As JAX's, reading ``shard_map`` from the module warns
once (DeprecationWarning) and gives ``shard_map(f, mesh, in_specs, out_specs,
check_rep=True)``: ``traxla.shard_map`` over every mesh axis, ``check_rep`` as
``check_vma``."""
from __future__ import annotations

import functools
import warnings

from traxla.sharding.shard_map import _shard_map


def _legacy_shard_map(f, mesh, in_specs, out_specs, check_rep=True):
    """Please use `jax.shard_map`. `jax.experimental.shard_map.shard_map`
  has been deprecated."""
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} of "
                        f"type {type(f)}.")
    return _shard_map(f, mesh, in_specs, out_specs, check_rep, frozenset())


_legacy_shard_map.__name__ = _legacy_shard_map.__qualname__ = "shard_map"

_deprecations = {
    "shard_map": ("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                  "instead.", _legacy_shard_map),
}


@functools.cache
def __getattr__(name):
    if name in _deprecations:
        message, fn = _deprecations[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# The other names of JAX's module (mostly its imports), as JAX's
import traxla._src.traceback_util as traceback_util
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's internal machinery of jax.experimental.shard_map (traxla implements its API its own way)",
      modules='jshmap')
