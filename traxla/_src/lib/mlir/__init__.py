"""``jax._src.lib.mlir``: the MLIR Python bindings jaxlib ships (``ir``, ``dialects``)."""
from traxla.lowering.mlir import ir  # noqa: F401
from traxla._src.lib.mlir import dialects  # noqa: F401
