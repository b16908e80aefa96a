"""The vector norms the optimizers need: ``traxla.numpy.linalg.norm`` when it exists (the
linalg helper provides it), else the same reductions written here."""
from __future__ import annotations

import types

import numpy as np

from traxla import numpy as jnp


def _vector_norm(x, ord=None):  # noqa: A002 - NumPy's name
    linalg = getattr(jnp, "linalg", None)
    if linalg is not None and hasattr(linalg, "norm"):
        return linalg.norm(x, ord=ord)
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x))))
    if ord == np.inf:
        return jnp.max(jnp.abs(x))
    if ord == -np.inf:
        return jnp.min(jnp.abs(x))
    if ord == 0:
        return jnp.sum(x != 0, dtype=jnp.finfo(jnp.abs(x).dtype).dtype)
    return jnp.sum(jnp.abs(x) ** ord) ** (1. / ord)


jnp_linalg = types.SimpleNamespace(norm=_vector_norm)
