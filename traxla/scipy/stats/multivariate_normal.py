"""``traxla.scipy.stats.multivariate_normal``, as ``jax.scipy.stats.multivariate_normal``
computes it (a Cholesky factor and a triangular solve, from ``traxla.lax.linalg`` and
``traxla.numpy.vectorize``, looked up when called)."""
from __future__ import annotations

from functools import partial

import numpy as np

from traxla import lax, numpy as jnp
from traxla.numpy._promotion import promote_dtypes_inexact


def _needs(obj, name, what):
    fn = getattr(obj, name, None) if obj is not None else None
    if fn is None:
        raise NotImplementedError(f"multivariate_normal.logpdf with a matrix covariance needs "
                                  f"{what}, which this build of traxla does not provide yet.")
    return fn


def logpdf(x, mean, cov, allow_singular=None):
    """Multivariate normal log probability density function."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    linalg = getattr(lax, "linalg", None)
    cholesky = _needs(linalg, "cholesky", "traxla.lax.linalg.cholesky")
    triangular_solve = _needs(linalg, "triangular_solve", "traxla.lax.linalg.triangular_solve")
    vectorize = _needs(jnp, "vectorize", "traxla.numpy.vectorize")
    L = cholesky(cov)  # noqa: N806 - the Cholesky factor's usual name
    y = vectorize(partial(triangular_solve, lower=True, transpose_a=True),
                  signature="(n,n),(n)->(n)")(L, x - mean)
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
    """Multivariate normal probability density function."""
    return lax.exp(logpdf(x, mean, cov))
