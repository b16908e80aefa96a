"""``traxla.scipy.integrate``: ``trapezoid``, as ``jax.scipy.integrate.trapezoid``."""
from __future__ import annotations

from traxla import numpy as jnp
from traxla.api import jit
from traxla.numpy._promotion import check_arraylike, promote_dtypes_inexact

__all__ = ["trapezoid"]


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of ``y`` (along ``axis``) by the trapezoidal rule, at sample points ``x``
    or a uniform spacing ``dx``."""
    fn = getattr(jnp, "trapezoid", None)
    if fn is not None:
        return fn(y, x, dx, axis)
    if x is None:
        check_arraylike("trapezoid", y)
        y_arr, = promote_dtypes_inexact(y)
        dx_array = jnp.asarray(dx)
    else:
        check_arraylike("trapezoid", y, x)
        y_arr, x_arr = promote_dtypes_inexact(y, x)
        if x_arr.ndim == 1:
            dx_array = x_arr[1:] - x_arr[:-1]
        else:
            x_arr = jnp.moveaxis(x_arr, axis, -1)
            dx_array = x_arr[..., 1:] - x_arr[..., :-1]
    y_arr = jnp.moveaxis(y_arr, axis, -1)
    return 0.5 * (dx_array * (y_arr[..., 1:] + y_arr[..., :-1])).sum(-1)


trapezoid = jit(_trapezoid, static_argnames=("axis",))
trapezoid.__name__ = "trapezoid"
