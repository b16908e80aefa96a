"""``jax._src.random.threefry2x32``: the Threefry-2x32 implementation's functions on one
key's raw ``uint32[2]`` data (the fields of ``threefry_prng_impl``)."""
from traxla.ir.rules.random import threefry2x32_p  # noqa: F401
from traxla.ir.rules.random import threefry_impl as threefry_prng_impl  # noqa: F401
from traxla.random import threefry_2x32  # noqa: F401
from traxla.random._impls import (threefry_fold_in, threefry_random_bits,  # noqa: F401
                                  threefry_seed, threefry_split)
