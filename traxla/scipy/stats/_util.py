"""Helpers shared by the distribution modules."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact  # noqa: F401


def _lax_const(x, value):
    """JAX's ``lax._const``: a NumPy scalar of ``x``'s dtype."""
    return np.array(value, lax.dtype_of(x))


def loc_scale_args(name, x, loc, scale):
    """``x, loc, scale`` promoted together, with ``ok = scale > 0`` (where the distribution is
    defined) and the standardized ``z = (x - loc) / scale``, bound in that order (JAX's)."""
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    return x, loc, scale, ok, lax.div(lax.sub(x, loc), scale)


def in_open_unit_interval(p):
    """``0 < p < 1``: where a percent point function is defined."""
    return lax.bitwise_and(lax.gt(p, _lax_const(p, 0)), lax.lt(p, _lax_const(p, 1)))


def select(condlist, choicelist, default=0):
    """``jnp.select``: the first matching choice (``traxla.numpy.select`` when it exists)."""
    fn = getattr(jnp, "select", None)
    if fn is not None:
        return fn(condlist, choicelist, default)
    out = jnp.asarray(default)
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = jnp.where(cond, choice, out)
    return out


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*shapes))
