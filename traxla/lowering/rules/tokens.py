"""Lowering of ``create_token`` and ``after_all`` to StableHLO's ops of the same names."""
from __future__ import annotations

from traxla.ir.rules.tokens import after_all_p, create_token_p
from traxla.lowering.mlir import hlo
from traxla.lowering.registry import register_lowering

register_lowering(create_token_p, lambda ctx, *operands: hlo.create_token())
register_lowering(after_all_p, lambda ctx, *operands: hlo.after_all(list(operands)))
