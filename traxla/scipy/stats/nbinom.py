"""``traxla.scipy.stats.nbinom``, as ``jax.scipy.stats.nbinom`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import _lax_const, promote_args_inexact
from traxla.scipy.special import gammaln, xlogy


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Negative-binomial log probability mass function."""
  k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
  one = _lax_const(k, 1)
  y = lax.sub(k, loc)
  comb_term = lax.sub(
    lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one))
  )
  log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
  log_probs = lax.add(comb_term, log_linear_term)
  return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Negative-binomial probability mass function."""
  return lax.exp(logpmf(k, n, p, loc))
