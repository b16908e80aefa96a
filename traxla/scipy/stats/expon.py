"""``traxla.scipy.stats.expon``, as ``jax.scipy.stats.expon`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import promote_args_inexact


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential log probability distribution function."""
  x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
  log_scale = lax.log(scale)
  linear_term = lax.div(lax.sub(x, loc), scale)
  log_probs = lax.neg(lax.add(linear_term, log_scale))
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential probability distribution function."""
  return lax.exp(logpdf(x, loc, scale))


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential cumulative density function."""
  x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
  neg_scaled_x = lax.div(lax.sub(loc, x), scale)
  return jnp.where(
    lax.lt(x, loc),
    jnp.zeros_like(neg_scaled_x),
    lax.neg(lax.expm1(neg_scaled_x)),
  )


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential log cumulative density function."""
  return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential log survival function."""
  x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
  neg_scaled_x = lax.div(lax.sub(loc, x), scale)
  return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential survival function."""
  return lax.exp(logsf(x, loc, scale))


def ppf(q: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Exponential percent point function."""
  q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
  return jnp.where(
    jnp.isnan(q) | (q < 0) | (q > 1),
    np.nan,
    lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))),
  )
