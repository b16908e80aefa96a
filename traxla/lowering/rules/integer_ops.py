"""Lowering of ``mulhi`` (``chlo.mulhi``) and ``reduce_xor``."""
from __future__ import annotations

from ...ir.rules.integer_ops import mulhi_p, reduce_xor_p
from ..mlir import chlo, hlo
from ..registry import register_lowering
from .elementwise import _binary
from .reduction import _reduce

register_lowering(mulhi_p, _binary(chlo.mulhi))
register_lowering(reduce_xor_p, _reduce(hlo.xor, lambda dt: 0))
