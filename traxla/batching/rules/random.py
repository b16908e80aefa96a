"""Batching rules of the random primitives (as JAX's: the key primitives are
vectorized over any leading key shape, ``random_wrap`` moves the batch axis to
the front, ``random_fold_in`` and ``threefry2x32`` broadcast)."""
from __future__ import annotations

from traxla import lax
from traxla.batching.batch_trace import bdim_at_front, register_batching
from traxla.batching.rules.elementwise import _ndim, _vectorized
from traxla.ir.rules.random import (random_bits_p, random_fold_in_p, random_seed_p, random_split_p,
                               random_unwrap_p, random_wrap_p, threefry2x32_p)


def _random_wrap(size, vals, dims, *, impl):
    x = bdim_at_front(vals[0], dims[0], size)
    return random_wrap_p.bind(x, impl=impl), 0


def _broadcasting(prim):
    """lax-style broadcasting operands (scalars, or equal ranks with size-1 dims): batch
    dims go to the front, unbatched operands gain a size-1 front dim, and batched ones
    whose example is a scalar gain trailing size-1 dims."""
    def rule(size, vals, dims, **params):
        ranks = [_ndim(x) - (d is not None) for x, d in zip(vals, dims)]
        rank = max(ranks)
        out = []
        for x, d, r in zip(vals, dims, ranks):
            if d is None:
                out.append(x if r == 0 else bdim_at_front(x, None, 1))
                continue
            x = bdim_at_front(x, d, size)
            if r < rank:
                x = lax.expand_dims(x, tuple(range(1 + r, 1 + rank)))
            out.append(x)
        res = prim.bind(*out, **params)
        return (res, [0] * len(res)) if prim.multiple_results else (res, 0)
    return rule


for _p in (random_seed_p, random_bits_p, random_split_p, random_unwrap_p):
    register_batching(_p, _vectorized(_p))
register_batching(random_wrap_p, _random_wrap)
register_batching(random_fold_in_p, _broadcasting(random_fold_in_p))
register_batching(threefry2x32_p, _broadcasting(threefry2x32_p))

from traxla.ir.rules.random import random_clone_p, random_gamma_p  # noqa: E402


def _random_gamma(size, vals, dims, *, log_space):
    keys, a = (bdim_at_front(x, d, size) for x, d in zip(vals, dims))
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


register_batching(random_clone_p, _vectorized(random_clone_p))
register_batching(random_gamma_p, _random_gamma)
