"""``mulhi`` and ``reduce_xor`` act on integers: zero tangents, as JAX."""
from __future__ import annotations

from traxla.ir.rules.integer_ops import mulhi_p, reduce_xor_p
from traxla.autodiff.rules._util import defjvp_zero

defjvp_zero(mulhi_p)
defjvp_zero(reduce_xor_p)
