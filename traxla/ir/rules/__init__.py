"""Primitive definitions and typing rules, one module per family."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401  (registers the primitives)
from . import random  # noqa: F401,E402  (typed PRNG keys and the random primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import ffi  # noqa: F401,E402  (ffi_call: user-registered native handlers)
