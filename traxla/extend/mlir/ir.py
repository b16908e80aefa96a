"""``jax.extend.mlir.ir``: MLIR's core classes (Context, Module, types, attributes)."""
from jaxlib.mlir.ir import *  # noqa: F401,F403
