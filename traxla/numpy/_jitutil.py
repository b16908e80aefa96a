"""``jit`` with JAX's handling of ``static_argnames``: names that are also positional
parameters are static whether passed by position or by keyword; and a result as JAX's
jitted jnp functions hand theirs back (``as_jit_result``)."""
from __future__ import annotations

import inspect

import numpy as np

from traxla.api import jit
from traxla.autodiff.ad import JVPTracer, tangent_aval
from traxla.ir.dtypes import float0
from traxla.primitives import aval_of
from traxla.runtime import device_put_numpy, to_array


def jit_named(fn, name=None, static_argnames=()):
    if name is not None:
        fn.__name__ = name
    static_argnames = tuple(static_argnames)
    params = list(inspect.signature(fn).parameters.values())
    argnums = tuple(i for i, p in enumerate(params)
                    if p.name in static_argnames
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return jit(fn, static_argnums=argnums, static_argnames=static_argnames)


def as_jit_result(x):
    """``x``, a jnp function's result, as JAX's (jitted) jnp function hands it back: under an
    eager jvp, a primal or tangent that went through unchanged as a Python scalar or NumPy
    value (``x + 0``, ``jnp.real`` of a real value) comes back an Array, the tangent of its
    primal's tangent type, as a run program's outputs are."""
    if type(x) is not JVPTracer:
        return x
    p, t = x.primal, x.tangent
    host_p, host_t = _is_host(p), _is_host(t)
    if not (host_p or host_t):
        return x
    primal = to_array(p) if host_p else p
    aval = tangent_aval(aval_of(primal))
    if host_t and aval.dtype != float0:  # (a float0 tangent stays host-side, as JAX's)
        t = device_put_numpy(np.asarray(t, aval.dtype), aval)
    return JVPTracer(x._trace, primal, t)


def _is_host(v) -> bool:
    return type(v) in (bool, int, float, complex) or isinstance(v, (np.ndarray, np.generic))
