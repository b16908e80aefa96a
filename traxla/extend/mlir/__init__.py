"""``jax.extend.mlir``: the MLIR Python bindings jaxlib ships, for code that builds
StableHLO itself (autodidax's ``xla_callable``): ``ir`` and ``dialects``."""
from traxla.extend.mlir import dialects, ir  # noqa: F401
