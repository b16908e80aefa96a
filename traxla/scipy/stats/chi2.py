"""``traxla.scipy.stats.chi2``, as ``jax.scipy.stats.chi2`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import _lax_const, promote_args_inexact
from traxla.scipy.special import gammainc, gammaincc


def logpdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square log probability distribution function."""
  x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
  one = _lax_const(x, 1)
  two = _lax_const(x, 2)
  y = lax.div(lax.sub(x, loc), scale)
  df_on_two = lax.div(df, two)

  kernel = lax.sub(lax.mul(lax.sub(df_on_two, one), lax.log(y)), lax.div(y,two))

  nrml_cnst = lax.neg(lax.add(lax.lgamma(df_on_two),lax.div(lax.mul(lax.log(two), df),two)))

  log_probs = lax.add(lax.sub(nrml_cnst, lax.log(scale)), kernel)
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square probability distribution function."""
  return lax.exp(logpdf(x, df, loc, scale))


def _gamma_arguments(name, x, df, loc, scale):
  """The (a, x) of the regularized incomplete gamma function that gives the CDF (gammainc)
  and the survival function (gammaincc): df / 2 and the standardized x / 2, clamped at 0."""
  x, df, loc, scale = promote_args_inexact(name, x, df, loc, scale)
  two = _lax_const(scale, 2)
  return (lax.div(df, two),
          lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)),
                    _lax_const(x, np.inf)))


def cdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square cumulative distribution function."""
  return gammainc(*_gamma_arguments("chi2.cdf", x, df, loc, scale))


def logcdf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square log cumulative distribution function."""
  return lax.log(cdf(x, df, loc, scale))


def sf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square survival function."""
  return gammaincc(*_gamma_arguments("chi2.sf", x, df, loc, scale))


def logsf(x: ArrayLike, df: ArrayLike, loc: ArrayLike = 0, scale: ArrayLike = 1) -> Array:
  """Chi-square log survival function."""
  return lax.log(sf(x, df, loc, scale))
