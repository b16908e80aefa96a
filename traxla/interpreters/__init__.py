"""``traxla.interpreters``: where user code registers a primitive's rules, as
``jax.interpreters``: ``mlir.register_lowering``, ``ad.primitive_jvps`` /
``ad.primitive_transposes``, ``batching.primitive_batchers``."""
import os  # noqa: F401  (a name of JAX's package, as its ``import os``)

from traxla._src import traceback_util  # noqa: F401
from traxla.interpreters import ad, batching, mlir, partial_eval, pxla, xla  # noqa: F401

__all__ = ["ad", "batching", "mlir", "partial_eval", "pxla", "xla"]
