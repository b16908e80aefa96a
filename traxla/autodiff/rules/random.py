"""Keys and random bits are not differentiable: every random primitive has a
zero tangent (``float0`` for keys and integers)."""
from __future__ import annotations

import numpy as np

from traxla.autodiff.rules._util import defjvp2, defjvp_zero
from traxla.ir.rules.random import P

for _prim in P.values():
    defjvp_zero(_prim)


# -- random_gamma: implicit reparameterization (d sample / d alpha from the CDF) --------------

from traxla import lax  # noqa: E402
from traxla.ir import dtypes  # noqa: E402
from traxla.ir.rules.random import random_gamma_p  # noqa: E402


def _gamma_grad(sample, a, *, log_space):
    samples = lax.reshape(sample, (int(np.prod(lax.shape_of(sample))),))
    alphas = lax.reshape(a, (int(np.prod(lax.shape_of(a))),))
    if log_space:
        # d[log(sample)] = d[sample] / sample; exp(log_sample) may round to zero: use tiny.
        samples = lax.exp(samples)
        zero = np.array(0, lax.dtype_of(sample))
        tiny = lax.full_like(samples, dtypes.finfo(lax.dtype_of(samples)).tiny)
        samples = lax.select(lax.eq(samples, zero), tiny, samples)

        def gamma_grad(alpha, sample):
            return lax.random_gamma_grad(alpha, sample) / sample
    else:
        gamma_grad = lax.random_gamma_grad
    # JAX maps over the elements on CPU (lax.map: a scan with no carry).
    _, grads = lax.scan(lambda carry, args: (carry, gamma_grad(*args)), (), (alphas, samples))
    return lax.reshape(grads, lax.shape_of(a))


defjvp2(random_gamma_p, None,
        lambda tangent, ans, key, a, **kwds: tangent * _gamma_grad(ans, a, **kwds))
