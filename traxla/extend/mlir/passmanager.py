"""``jax.extend.mlir.passmanager``: MLIR's PassManager (run pass pipelines on a module)."""
from jaxlib.mlir.passmanager import *  # noqa: F401,F403
