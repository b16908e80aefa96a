"""The jet rules of traxla's primitives, registered into ``traxla.jet.jet_rules`` on import:
elementwise arithmetic and transcendental functions (``elementwise``), and shape, indexing,
reduction, contraction and call primitives (``structural``). The set is JAX's: a primitive
JAX's jet has no rule for has none here either."""
from traxla.jet.rules import elementwise, structural  # noqa: F401
