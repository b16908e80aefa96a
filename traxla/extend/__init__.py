"""``traxla.extend``: the API for writing interpreters of jaxprs and new primitives from
user code, as ``jax.extend``: ``core`` (jaxprs, ``Primitive``, and ``core.primitives``, every
primitive JAX lists), ``linear_util``, ``backend``, ``lowering``, ``mlir``, ``random``,
``sharding``, ``source_info_util``, ``xla``, ``ifrt_programs``, ``pallas`` (unsupported); the rule registries are in
``traxla.interpreters`` (``mlir``, ``ad``, ``batching``)."""
import importlib as _importlib

from traxla.extend import core, linear_util, source_info_util  # noqa: F401

# imported on first use: ``mlir`` alone (jaxlib's dialect modules) costs ~0.1 s at startup
_LAZY = ("backend", "ifrt_programs", "lowering", "mlir", "pallas", "random", "sharding",
         "xla")


def __getattr__(name):
    if name in _LAZY:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["backend", "core", "linear_util", "lowering", "mlir", "random", "sharding",
           "source_info_util", "xla"]
