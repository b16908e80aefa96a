"""Primitive definitions and typing rules, one module per family."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401  (registers the primitives)
from . import random  # noqa: F401,E402  (typed PRNG keys and the random primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import ad_checkpoint, optimization  # noqa: F401,E402  (remat2, name; reduce_precision, optimization_barrier)
from . import integer_ops, rng, platform  # noqa: F401,E402  (mulhi, reduce_xor; XLA's generators; platform_index)
from . import composite  # noqa: F401,E402  (stablehlo.composite)
from . import all_to_all  # noqa: F401,E402  (all_to_all, pswapaxes)
from . import sharding_constraint  # noqa: F401,E402  (with_sharding_constraint)
