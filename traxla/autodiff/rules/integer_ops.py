"""``mulhi`` acts on integers: zero tangents, as JAX (``reduce_xor`` has no JVP rule in JAX:
differentiating it with a float operand raises NotImplementedError, not its typing error)."""
from __future__ import annotations

from traxla.ir.rules.integer_ops import mulhi_p
from traxla.autodiff.rules._util import defjvp_zero

defjvp_zero(mulhi_p)
