"""``traxla.interpreters``: where user code registers a primitive's rules, as
``jax.interpreters``: ``mlir.register_lowering``, ``ad.primitive_jvps`` /
``ad.primitive_transposes``, ``batching.primitive_batchers``."""
from traxla.interpreters import ad, batching, mlir, partial_eval, pxla  # noqa: F401

__all__ = ["ad", "batching", "mlir", "partial_eval", "pxla"]
