"""``jax._src.lib``: JAX's bridge to jaxlib. ``xla_client`` is jaxlib's own module (the
autodidax notebook builds buffers and shardings with it), ``mlir`` the MLIR bindings
(``jax._src.lib.mlir.dialects.hlo``: the primitives page's lowering rules)."""
from traxla.runtime.xla_adapter.clients import JAXLIB_VERSION as version_str, xla_client  # noqa: F401
from traxla._src.lib import mlir  # noqa: F401

version = tuple(int(p) for p in version_str.split(".")[:3])
jaxlib_extension_version: int = getattr(xla_client, "_version", 0)

# The CUDA plugin's version queries (JAX's ``jax._src.lib.cuda_versions``): None without one.
cuda_versions = None
for _plugin in ("jax_cuda13_plugin", "jax_cuda12_plugin", "jaxlib.cuda"):
    try:
        import importlib as _importlib
        cuda_versions = _importlib.import_module(f"{_plugin}._versions")
        break
    except ImportError:
        cuda_versions = None
