"""XLA's stateless and stateful random-bit operations: ``rng_bit_generator`` and
``rng_uniform`` (``traxla.random`` builds on neither)."""
from __future__ import annotations

import operator

import numpy as np

from traxla.ir.rules.rng import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p

_BIT_DTYPES = frozenset(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """``(new_key, bits)`` from XLA's RngBitGenerator (key: u32[4] or u64[2])."""
    shape = tuple(operator.index(d) for d in shape)
    dtype = np.dtype(dtype)
    if dtype not in _BIT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype, algorithm=algorithm,
                                          out_sharding=out_sharding))


def rng_uniform(a, b, shape):
    """Stateful uniform numbers in ``[a, b)`` (XLA's RngUniform; prefer ``traxla.random``)."""
    return rng_uniform_p.bind(a, b, shape=tuple(shape))
