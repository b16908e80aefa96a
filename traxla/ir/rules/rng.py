"""XLA's own random number generators, as ``lax`` exposes them: ``rng_bit_generator``
(a counter-based generator on a u32[4] or u64[2] key, returning the new key and bits) and
``rng_uniform`` (the stateful, unspecified-algorithm ``stablehlo.rng``)."""
from __future__ import annotations

import enum

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)
rng_uniform_p = Primitive("rng_uniform")


class RandomAlgorithm(enum.IntEnum):
    """The bit generator's algorithm (prints as its name)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name


_BITS = {np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)}


def _rng_bit_generator_rule(key, *, shape, dtype, algorithm, out_sharding):
    if not ((key.shape == (4,) and key.dtype == np.uint32)
            or (key.shape == (2,) and key.dtype == np.uint64)):
        raise TypeError(f"rng_bit_generator: the key must be a u32[4] or u64[2] array, got "
                        f"{key.str_short()}.")
    if np.dtype(dtype) not in _BITS:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
    return [key, ShapedArray(tuple(shape), np.dtype(dtype), False)]


def _rng_uniform_rule(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError("Arguments to rng_uniform must have identical dtypes, got "
                         f"{a.dtype} and {b.dtype}.")
    if a.shape != () or b.shape != ():
        raise ValueError("Arguments to rng_uniform must be scalars; got shapes "
                         f"{a.shape} and {b.shape}.")
    if not (dtypes.is_float(a.dtype) or dtypes.is_int(a.dtype)):
        raise TypeError(f"rng_uniform: unsupported dtype {a.dtype}")
    return ShapedArray(tuple(shape), a.dtype, a.weak_type and b.weak_type)


def_typing(rng_bit_generator_p, _rng_bit_generator_rule)
def_typing(rng_uniform_p, _rng_uniform_rule)
