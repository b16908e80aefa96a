"""Lowering rules, one module per primitive family (mirrors ir/rules)."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401
from . import random  # noqa: F401,E402  (threefry and the key primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import ad_checkpoint, optimization  # noqa: F401,E402  (remat2, name; reduce_precision, optimization_barrier)
from . import integer_ops, rng, platform  # noqa: F401,E402  (mulhi, reduce_xor; XLA's generators; platform_index)
from . import composite  # noqa: F401,E402  (stablehlo.composite)
from . import all_to_all  # noqa: F401,E402  (all_to_all, pswapaxes)
from . import sharding_constraint  # noqa: F401,E402  (with_sharding_constraint)
from . import linear_call  # noqa: F401,E402  (custom_derivatives.linear_call)
