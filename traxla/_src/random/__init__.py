"""``jax._src.random``: the package holding JAX's PRNG implementations (``prng``,
``threefry2x32``) and the samplers of ``jax.random``."""
from traxla.random import *  # noqa: F401,F403
from traxla.random import PRNGImpl, default_prng_impl, key_dtype, random_seed  # noqa: F401
from traxla.random import _resolve_impl as resolve_prng_impl  # noqa: F401
from traxla.random._impls import PRNGSpec  # noqa: F401
from traxla._src.random import prng, threefry2x32  # noqa: F401,E402
