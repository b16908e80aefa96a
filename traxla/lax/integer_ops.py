"""Integer operations beyond the elementwise ones: ``mulhi`` (the high half of a product)
and ``reduce_xor``."""
from __future__ import annotations

from traxla.ir.rules.integer_ops import mulhi_p, reduce_xor_p


def mulhi(x, y, /):
    """The high half of the double-width product of two integer arrays."""
    return mulhi_p.bind(x, y)


def reduce_xor(operand, axes):
    """Bitwise XOR of ``operand``'s elements along ``axes``."""
    return reduce_xor_p.bind(operand, axes=tuple(axes))
