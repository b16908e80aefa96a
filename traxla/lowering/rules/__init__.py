"""Lowering rules, one module per primitive family (mirrors ir/rules)."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing  # noqa: F401
