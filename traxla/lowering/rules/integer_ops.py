"""Lowering of ``mulhi`` (``chlo.mulhi``) and ``reduce_xor``."""
from __future__ import annotations

from ...ir.rules.integer_ops import mulhi_p, reduce_xor_p
from ..registry import register_elementwise_op, register_lowering
from .elementwise import _binary
from .reduction import _reduce

register_elementwise_op(mulhi_p, "chlo.mulhi", _binary("chlo.mulhi"))
register_lowering(reduce_xor_p, _reduce("stablehlo.xor", lambda dt: 0))
