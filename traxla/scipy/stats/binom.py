"""``traxla.scipy.stats.binom``, as ``jax.scipy.stats.binom`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import promote_args_inexact, _lax_const
from traxla.scipy.special import gammaln, xlogy, xlog1py


def logpmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Binomial log probability mass function."""
  k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
  y = lax.sub(k, loc)
  zero = _lax_const(y, 0)
  comb_term = lax.sub(
      gammaln(n + 1),
      lax.add(gammaln(y + 1), gammaln(n - y + 1))
  )
  log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
  log_probs = lax.add(comb_term, log_linear_term)
  y_n_cond = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                            lax.eq(log_linear_term, zero))
  log_probs = jnp.where(y_n_cond, 0., log_probs)
  return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k: ArrayLike, n: ArrayLike, p: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Binomial probability mass function."""
  return lax.exp(logpmf(k, n, p, loc))
