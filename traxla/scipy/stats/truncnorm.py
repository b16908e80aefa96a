"""``traxla.scipy.stats.truncnorm``, as ``jax.scipy.stats.truncnorm`` computes it."""
from __future__ import annotations

import numpy as np

from traxla.api import jit
from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import promote_args_inexact, select as _select
from traxla.scipy.stats import norm
from traxla.scipy.special import logsumexp, log_ndtr, ndtr


def _log_diff(x, y):
  return logsumexp(
    jnp.array([x, y]),
    b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]),
    axis=0
  )


def _log_gauss_mass(a, b):
  """Log of Gaussian probability mass within an interval"""
  a, b = jnp.array(a), jnp.array(b)
  a, b = jnp.broadcast_arrays(a, b)

  # Note: Docstring carried over from scipy
  # Calculations in right tail are inaccurate, so we'll exploit the
  # symmetry and work only in the left tail
  case_left = b <= 0
  case_right = a > 0
  case_central = ~(case_left | case_right)

  # By conditionally swapping arguments if we're in the right tail,
  # we only need to compile the mass_case_left graph once instead of twice.
  a_tail = jnp.where(case_right, -b, a)
  b_tail = jnp.where(case_right, -a, b)

  mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))

  # Catastrophic cancellation occurs as np.exp(log_mass) approaches 1.
  # Correct for this with an alternative formulation.
  # We're not concerned with underflow here: if only one term
  # underflows, it was insignificant; if both terms underflow,
  # the result can't accurately be represented in logspace anyway
  # because sc.log1p(x) ~ x for small x.
  mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))

  out = jnp.where(case_central, mass_central, mass_tail)
  return out


@jit
def logpdf(x, a, b, loc=0, scale=1):
  """Truncated normal log probability distribution function."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
  val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))

  x_scaled = lax.div(lax.sub(x, loc), scale)
  val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
  val = jnp.where(a >= b, np.nan, val)
  return val


def pdf(x, a, b, loc=0, scale=1):
  """Truncated normal probability distribution function."""
  return lax.exp(logpdf(x, a, b, loc, scale))

@jit
def logsf(x, a, b, loc=0, scale=1):
  """Truncated normal distribution log survival function."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
  return logcdf(-x, -b, -a, -loc, scale)


@jit
def sf(x, a, b, loc=0, scale=1):
  """Truncated normal distribution survival function."""
  return lax.exp(logsf(x, a, b, loc, scale))


@jit
def logcdf(x, a, b, loc=0, scale=1):
  """Truncated normal log cumulative distribution function."""
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
  x, a, b = jnp.broadcast_arrays(x, a, b)
  x = lax.div(lax.sub(x, loc), scale)
  lgm_ab = _log_gauss_mass(a, b)
  logcdf = _log_gauss_mass(a, x) - lgm_ab
  logsf = _log_gauss_mass(x, b) - lgm_ab

  logcdf = _select(
    # third condition: avoid catastrophic cancellation (from scipy)
    [x >= b, x <= a, logcdf > -0.1, x > a],
    [0, -np.inf, jnp.log1p(-jnp.exp(logsf)), logcdf]
  )
  logcdf = jnp.where(a >= b, np.nan, logcdf)
  return logcdf

@jit
def cdf(x, a, b, loc=0, scale=1):
  """Truncated normal cumulative distribution function."""
  return lax.exp(logcdf(x, a, b, loc, scale))
