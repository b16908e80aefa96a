"""Helpers shared by the distribution modules."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact  # noqa: F401


def _lax_const(x, value):
    """JAX's ``lax._const``: a NumPy scalar of ``x``'s dtype."""
    return np.array(value, lax.dtype_of(x))


def select(condlist, choicelist, default=0):
    """``jnp.select``: the first matching choice (``traxla.numpy.select`` when it exists)."""
    from traxla import numpy as jnp
    fn = getattr(jnp, "select", None)
    if fn is not None:
        return fn(condlist, choicelist, default)
    out = jnp.asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = jnp.where(cond, choice, out)
    return out


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))
