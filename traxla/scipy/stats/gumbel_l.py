"""``traxla.scipy.stats.gumbel_l``, as ``jax.scipy.stats.gumbel_l`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import in_open_unit_interval, loc_scale_args, promote_args_inexact
from traxla.scipy.special import xlogy, xlog1py


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) log probability distribution function."""
  x, loc, scale, ok, z = loc_scale_args("gumbel_l.logpdf", x, loc, scale)
  # logpdf = -log(scale) + z - exp(z)
  neg_log_scale = xlogy(-1, scale)
  t2 = lax.sub(z, lax.exp(z))
  log_pdf = lax.add(neg_log_scale, t2)
  return jnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) probability distribution function."""
  return lax.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) log cumulative density function."""
  x, loc, scale, ok, z = loc_scale_args("gumbel_l.logcdf", x, loc, scale)
  neg_exp_z = lax.neg(lax.exp(z))
  # xlog1p fails here, that's why log1p is used here
  # even log1p fails for some cases when using float64 mode
  # so we're using this formula which is stable
  log_cdf = lax.log(-lax.expm1(neg_exp_z))
  return jnp.where(ok, log_cdf, np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) cumulative density function."""
  return lax.exp(logcdf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) percent point function (inverse of CDF)"""
  p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
  ok = in_open_unit_interval(p)
  # quantile = loc + (scale)*log(-log(1 - p))
  t1 = xlog1py(-1, lax.neg(p))
  # xlogp failed here too, that's why log is used
  t = lax.mul(scale, lax.log(t1))
  quantile = lax.add(loc, t)
  return jnp.where(ok, quantile, np.nan)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) survival function."""
  return jnp.exp(logsf(x, loc, scale))


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Left Skewed) log survival function."""
  x, loc, scale, ok, z = loc_scale_args("gumbel_l.logsf", x, loc, scale)
  # logsf = -exp(z)
  log_sf = lax.neg(lax.exp(z))
  return jnp.where(ok, log_sf, np.nan)
