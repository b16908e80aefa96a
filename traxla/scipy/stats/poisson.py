"""``traxla.scipy.stats.poisson``, as ``jax.scipy.stats.poisson`` computes it."""
from __future__ import annotations

import numpy as np

from traxla.api import jit
from traxla import lax, numpy as jnp
from traxla.scipy.stats._util import _lax_const, broadcast_shapes as _broadcast_shapes
from traxla.numpy._promotion import promote_args_inexact_arrays as promote_args_inexact, promote_dtypes_inexact, ensure_arraylike
from traxla.scipy.special import xlogy, entr, gammaln, gammaincc


def logpmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Poisson log probability mass function."""
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  zero = _lax_const(k, 0)
  x = lax.sub(k, loc)
  log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
  return jnp.where(jnp.logical_or(lax.lt(x, zero),
                                  lax.ne(jnp.round(k), k)), -np.inf, log_probs)


def pmf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Poisson probability mass function."""
  return jnp.exp(logpmf(k, mu, loc))


def cdf(k: ArrayLike, mu: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Poisson cumulative distribution function."""
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  zero = _lax_const(k, 0)
  x = lax.sub(k, loc)
  p = gammaincc(jnp.floor(1 + x), mu)
  return jnp.where(lax.lt(x, zero), zero, p)

@jit
def entropy(mu: ArrayLike, loc: ArrayLike = 0) -> Array:
  """Shannon entropy of the Poisson distribution."""
  mu, loc = (jnp.asarray(v) for v in ensure_arraylike("poisson.entropy", mu, loc))
  promoted_mu, promoted_loc = promote_dtypes_inexact(mu, loc)

  #Note: loc does not affect the entropy - translation invariant
  #it has only been taken to maintain compatibility with scipy api
  result_shape = _broadcast_shapes(lax.shape_of(promoted_mu), lax.shape_of(promoted_loc))

  mu_flat = jnp.ravel(promoted_mu)
  zero_result = jnp.zeros_like(mu_flat)


  # Choose the computation regime based on mu value
  result = jnp.where(
    mu_flat == 0,
    zero_result,
    jnp.where(
      mu_flat < 10,
      _entropy_small_mu(mu_flat),
      jnp.where(
        mu_flat < 100,
        _entropy_medium_mu(mu_flat),
        _entropy_large_mu(mu_flat)
      )
    )
  )

  result_mu_shape = jnp.reshape(result, promoted_mu.shape)

  # Restore original shape
  return jnp.broadcast_to(result_mu_shape, result_shape)

def _entropy_small_mu(mu: Array) -> Array:
  """Entropy via direct PMF summation for small μ (< 10)."""
  max_k = 35

  k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
  probs = pmf(k, mu, 0)

  # Mask: only compute up to mu + 20 for each value
  upper_bounds = jnp.ceil(mu + 20).astype(k.dtype)
  mask = k < upper_bounds[None, :]
  probs_masked = jnp.where(mask, probs, 0.0)

  return jnp.sum(entr(probs_masked), axis=0)

def _entropy_medium_mu(mu: Array) -> Array:
  """Entropy for medium mu (10-100): Adaptive bounds based on std dev."""
  max_k = 250  # Static bound for JIT. For mu<100, upper bound < 220

  k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
  probs = pmf(k, mu, 0)

  upper_bounds = jnp.ceil(mu + 10 * jnp.sqrt(mu) + 20).astype(k.dtype)
  mask = k < upper_bounds[None, :]
  probs_masked = jnp.where(mask, probs, 0.0)

  return jnp.sum(entr(probs_masked), axis=0)

def _entropy_large_mu(mu: Array) -> Array:
  """Entropy for large mu (>= 100): Asymptotic approximation."""
  return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)
