"""Lowering rules, one module per primitive family (mirrors ir/rules)."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing, collectives  # noqa: F401
from . import random  # noqa: F401,E402  (threefry and the key primitives)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from . import ffi  # noqa: F401,E402  (ffi_call to stablehlo.custom_call)
