"""``traxla.scipy.stats.gumbel_r``, as ``jax.scipy.stats.gumbel_r`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import (_lax_const, in_open_unit_interval, loc_scale_args,
                                     promote_args_inexact)
from traxla.scipy.special import xlogy
from traxla.nn import log1mexp


def logpdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) log probability distribution function."""
  x, loc, scale, ok, z = loc_scale_args("gumbel_r.logpdf", x, loc, scale)
  # logpdf = -log(beta) - (z + exp(-z))
  neg_log_scale = xlogy(-1, scale)
  t2 = lax.neg(lax.add(z, lax.exp(lax.neg(z))))
  log_pdf = lax.add(neg_log_scale, t2)
  return jnp.where(ok, log_pdf, np.nan)


def pdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) probability distribution function."""
  return lax.exp(logpdf(x, loc, scale))


def logcdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) log cumulative density function."""
  x, loc, scale, ok, z = loc_scale_args("gumbel_r.logcdf", x, loc, scale)
  # log cdf = -exp(-z)
  log_cdf = lax.neg(lax.exp(lax.neg(z)))
  return jnp.where(ok, log_cdf, np.nan)


def cdf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) cumulative density function."""
  return lax.exp(logcdf(x, loc, scale))


def ppf(p: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) percent point function."""
  p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
  ok = in_open_unit_interval(p)

  # quantile = loc - (scale)*log(-log(p))
  t1 = xlogy(-1, p)
  t = lax.mul(scale, lax.log(t1))
  quantile = lax.sub(loc, t)
  return jnp.where(ok, quantile, np.nan)


def sf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) survival function."""
  x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
  ok = lax.gt(scale, _lax_const(scale, 0))
  # sf = 1 - exp(-exp(-z))
  neg_z = lax.div(lax.sub(loc, x), scale)
  t1 = lax.exp(lax.neg(lax.exp(neg_z)))
  _sf = lax.sub(_lax_const(x, 1), t1)
  return jnp.where(ok, _sf, np.nan)


def logsf(x: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Gumbel Distribution (Right Skewed) log survival function."""
  x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
  ok = lax.gt(scale, _lax_const(scale, 0))
  # logsf = log(1 - exp(-exp(-z)))
  neg_z = lax.div(lax.sub(loc, x), scale)
  log_sf = log1mexp(lax.exp(neg_z))
  return jnp.where(ok, log_sf, np.nan)
