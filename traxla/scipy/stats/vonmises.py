"""``traxla.scipy.stats.vonmises``, as ``jax.scipy.stats.vonmises`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import _lax_const, promote_args_inexact


def logpdf(x: ArrayLike, kappa: ArrayLike) -> Array:
  """von Mises log probability distribution function."""
  x, kappa = promote_args_inexact('vonmises.logpdf', x, kappa)
  zero = _lax_const(kappa, 0)
  return jnp.where(lax.gt(kappa, zero), kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa)), np.nan)


def pdf(x: ArrayLike, kappa: ArrayLike) -> Array:
  """von Mises probability distribution function."""
  return lax.exp(logpdf(x, kappa))
