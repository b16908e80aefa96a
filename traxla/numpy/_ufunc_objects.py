"""``jnp.add``, ``jnp.multiply``, ... as ``jnp.ufunc`` objects, as in JAX: calling one is the
ordinary (eager-cached) function; ``reduce``/``accumulate``/``at`` use the fast reductions
JAX gives each (``jnp.add.reduce`` is ``sum``, ``jnp.maximum.reduce`` is ``max``...), the
others fall back to the generic scan-based methods of ``jnp.ufunc``."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.numpy._reductions import _reduce, cumprod, cumsum, logsumexp
from traxla.numpy._ufuncs import ufuncs
from traxla.numpy._vectorize import ufunc


def _add_at(a, indices, b):
    if a.dtype == bool:  # JAX: through int32, back to bool
        a = a.astype("int32")
        b = lax.convert_element_type(b, bool).astype("int32")
        return a.at[indices].add(b).astype(bool)
    return a.at[indices].add(b)


def _multiply_at(a, indices, b):
    if a.dtype == bool:
        a = a.astype("int32")
        b = lax.convert_element_type(b, bool).astype("int32")
        return a.at[indices].mul(b).astype(bool)
    return a.at[indices].mul(b)


def _subtract_at(a, indices, b):
    return a.at[indices].subtract(b)


def _reduction(name):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return lax._lift(_reduce(name, a, axis, dtype, out, keepdims, initial, where))
    return reduce


def _logaddexp_reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
                      where=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp.reduce is not supported.")
    result = logsumexp(a, axis=axis, keepdims=keepdims, where=where)  # dtype unused, as JAX
    return result if initial is None else ufuncs["logaddexp"](initial, result)


def _logaddexp2_reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
                       where=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp2.reduce is not supported.")
    ln2 = float(np.log(2))
    if initial is not None:
        initial = initial * ln2
    return _logaddexp_reduce(ufuncs["multiply"](a, ln2), axis=axis, keepdims=keepdims,
                             initial=initial, where=where) / ln2


def _accumulate(fn):
    return lambda a, axis=0, dtype=None: fn(a, axis=axis, dtype=dtype)


# name -> (identity, reduce, accumulate, at), JAX's table (jax/_src/numpy/ufuncs.py).
_BINARY = {
    "add": (0, _reduction("sum"), _accumulate(cumsum), _add_at),
    "multiply": (1, _reduction("prod"), _accumulate(cumprod), _multiply_at),
    "subtract": (None, None, None, _subtract_at),
    "minimum": (None, _reduction("min"), None, None),
    "maximum": (None, _reduction("max"), None, None),
    "bitwise_and": (-1, None, None, None),
    "bitwise_or": (0, None, None, None),
    "bitwise_xor": (0, None, None, None),
    "logical_and": (True, _reduction("all"), None, None),
    "logical_or": (False, _reduction("any"), None, None),
    "logical_xor": (False, None, None, None),
    "logaddexp": (-np.inf, _logaddexp_reduce, None, None),
    "logaddexp2": (-np.inf, _logaddexp2_reduce, None, None),
}
_UNARY = ("negative",)


def make_ufuncs(namespace: dict) -> dict:
    """The ufunc objects for the functions of these names in ``namespace`` (the eager-cached
    ``jnp`` functions), keyed by name."""
    out = {}
    for name, (identity, reduce, accumulate, at) in _BINARY.items():
        call = namespace[name]
        out[name] = ufunc(call, 2, 1, name=name, identity=identity, call=call, reduce=reduce,
                          accumulate=accumulate, at=at)
    for name in _UNARY:
        call = namespace[name]
        out[name] = ufunc(call, 1, 1, name=name, call=call)
    return out


__all__ = ["make_ufuncs"]
