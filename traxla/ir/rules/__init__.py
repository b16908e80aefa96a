"""Primitive definitions and typing rules, one module per family."""
from . import elementwise, shape, reduction, call, control_flow, ad, indexing  # noqa: F401  (registers the primitives)
