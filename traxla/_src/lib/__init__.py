"""``jax._src.lib``: JAX's bridge to jaxlib. ``xla_client`` is jaxlib's own module (the
autodidax notebook builds buffers and shardings with it), ``mlir`` the MLIR bindings
(``jax._src.lib.mlir.dialects.hlo``: the primitives page's lowering rules)."""
from traxla.runtime.xla_adapter import JAXLIB_VERSION as version_str, xla_client  # noqa: F401
from traxla._src.lib import mlir  # noqa: F401

version = tuple(int(p) for p in version_str.split(".")[:3])
jaxlib_extension_version: int = getattr(xla_client, "_version", 0)
