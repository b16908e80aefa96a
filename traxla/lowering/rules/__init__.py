"""Lowering rules, one module per primitive family (mirrors ir/rules)."""
from . import elementwise, shape, reduction, call, control_flow, ad  # noqa: F401
