"""``jax.extend.random``: PRNG implementations and the key primitives beneath
``jax.random``. traxla's built-in keys are Threefry-2x32 keys (``threefry_prng_impl``);
``define_prng_impl`` makes a user-defined implementation; JAX's RBG implementations are
named here and refused when a key of theirs is made."""
from __future__ import annotations

from traxla.ir.rules.random import PRNGImpl, threefry2x32_p  # noqa: F401
from traxla.ir.rules.random import rbg_impl as rbg_prng_impl
from traxla.ir.rules.random import threefry_impl as threefry_prng_impl
from traxla.ir.rules.random import unsafe_rbg_impl as unsafe_rbg_prng_impl
from traxla.random import random_seed, threefry_2x32  # noqa: F401
from traxla.random._impls import define_prng_impl  # noqa: F401


def seed_with_impl(impl: PRNGImpl, seed):
    """A key array of ``impl`` from integer ``seed`` (an int or an integer array)."""
    return random_seed(seed, impl=impl)




__all__ = ["define_prng_impl", "random_seed", "rbg_prng_impl", "seed_with_impl",
           "threefry2x32_p", "threefry_2x32", "threefry_prng_impl", "unsafe_rbg_prng_impl"]
