"""Helpers shared by ``traxla.scipy.linalg``'s modules."""
from __future__ import annotations

import numpy as np

from traxla import numpy as jnp
from traxla.batching import vmap


def asarray(x):
    return jnp.asarray(x)


def vectorize(fn, core_ndims):
    """Applies ``fn`` (written for unbatched operands of ``core_ndims`` dims each) over the
    broadcast leading batch dims of its operands (NumPy's gufunc broadcasting)."""
    def wrapped(*args):
        args = [asarray(a) for a in args]
        batch = np.broadcast_shapes(*[a.shape[:a.ndim - k] for a, k in zip(args, core_ndims)])
        if not batch:
            return fn(*args)
        args = [jnp.broadcast_to(a, tuple(batch) + a.shape[a.ndim - k:])
                for a, k in zip(args, core_ndims)]
        f = fn
        for _ in batch:
            f = vmap(f)
        return f(*args)
    return wrapped


def complex_dtype(dtype):
    return np.dtype(np.complex128) if np.dtype(dtype) in (np.float64, np.complex128) \
        else np.dtype(np.complex64)
