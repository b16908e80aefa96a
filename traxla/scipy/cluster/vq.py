"""``traxla.scipy.cluster.vq``: ``vq`` assigns each observation its nearest code, as JAX's
``jax.scipy.cluster.vq.vq`` computes it."""
from __future__ import annotations

import operator

from traxla import numpy as jnp
from traxla.batching.batch_trace import vmap
from traxla.numpy._promotion import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """Assign codes from a code book to a set of observations.

    JAX implementation of :func:`scipy.cluster.vq.vq`: ``obs`` is ``(M, N)`` (or ``(M,)``,
    one-element observations), ``code_book`` is ``(K, N)`` (or ``(K,)``). Returns
    ``(code, dist)``: the index of each observation's nearest code (Euclidean distance)
    and that distance. ``check_finite`` is unused, as in JAX.
    """
    del check_finite  # unused
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, cb_arr = promote_dtypes_inexact(obs, code_book)
    if obs_arr.ndim != cb_arr.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, cb_arr = obs_arr[..., None], cb_arr[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = vmap(lambda ob: jnp.linalg.norm(ob[None] - cb_arr, axis=-1))(obs_arr)
    code = jnp.argmin(dist, axis=-1)
    dist_min = vmap(operator.getitem)(dist, code)
    return code, dist_min
