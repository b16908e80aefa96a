"""``traxla.scipy.stats.multinomial``, as ``jax.scipy.stats.multinomial`` computes it."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla import lax, numpy as jnp
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact, promote_args_numeric, _lift
from traxla.scipy.special import gammaln, xlogy


def logpmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
  """Multinomial log probability mass function."""
  p, = promote_args_inexact("multinomial.logpmf", p)
  x, n = (_lift(v) for v in promote_args_numeric("multinomial.logpmf", x, n))
  if not dtypes.is_int(x.dtype):
    raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
  x = x.astype(p.dtype)
  n = n.astype(p.dtype)
  logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
  return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def pmf(x: ArrayLike, n: ArrayLike, p: ArrayLike) -> Array:
  """Multinomial probability mass function."""
  return lax.exp(logpmf(x, n, p))
