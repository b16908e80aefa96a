"""Lowering of ``mulhi`` (``chlo.mulhi``) and ``reduce_xor``."""
from __future__ import annotations

from traxla.ir.rules.integer_ops import mulhi_p, reduce_xor_p
from traxla.lowering.registry import register_direct_rule, register_elementwise_op
from traxla.lowering.rules.elementwise import _binary
from traxla.lowering.rules.reduction import _reduce

register_elementwise_op(mulhi_p, "chlo.mulhi", _binary("chlo.mulhi"))
_rule, _direct = _reduce("stablehlo.xor", lambda dt: 0)  # (a rule and the loop's direct one)
register_direct_rule(reduce_xor_p, _direct, _rule)
