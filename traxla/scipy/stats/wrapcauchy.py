"""``traxla.scipy.stats.wrapcauchy``, as ``jax.scipy.stats.wrapcauchy`` computes it."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import _lax_const, promote_args_inexact


def logpdf(x: ArrayLike, c: ArrayLike) -> Array:
  """Wrapped Cauchy log probability distribution function."""
  x, c = promote_args_inexact('wrapcauchy.logpdf', x, c)
  return jnp.where(
    lax.gt(c, _lax_const(c, 0)) & lax.lt(c, _lax_const(c, 1)),
    jnp.where(
      lax.ge(x, _lax_const(x, 0)) & lax.le(x, _lax_const(x, np.pi * 2)),
      jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x)),
      -np.inf,
    ),
    np.nan,
  )


def pdf(x: ArrayLike, c: ArrayLike) -> Array:
  """Wrapped Cauchy probability distribution function."""
  return lax.exp(logpdf(x, c))
