"""``jax._src.random.prng``: the PRNG implementation interface (``PRNGImpl``, the registry
``prngs``/``register_prng``) and the key primitives (Pallas's PRNG kernels build their
implementations with these)."""
from traxla.ir.rules.random import (PRNGImpl, prngs, random_bits_p, random_fold_in_p,  # noqa: F401
                                    random_seed_p, random_split_p, random_unwrap_p,
                                    random_wrap_p, register_prng, threefry2x32_p)
from traxla.ir.rules.random import threefry_impl as threefry_prng_impl  # noqa: F401
from traxla.random import random_seed, random_unwrap, random_wrap  # noqa: F401
from traxla.random import threefry_2x32  # noqa: F401
from traxla.extend.random import seed_with_impl  # noqa: F401

UINT_DTYPES = {8: "uint8", 16: "uint16", 32: "uint32", 64: "uint64"}


def random_split(keys, shape):
    return random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys, msgs):
    from traxla import numpy as jnp
    return random_fold_in_p.bind(keys, jnp.asarray(msgs, dtype="uint32"))


def random_bits(keys, bit_width, shape):
    return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


def iterated_vmap_unary(n, f):
    """``f`` vmapped ``n`` times (over ``n`` leading axes)."""
    from traxla import vmap
    for _ in range(n):
        f = vmap(f)
    return f
