"""``traxla.extend``: the API for writing interpreters of jaxprs and new primitives from
user code, as ``jax.extend`` (``extend.core``), with the rule registries in
``traxla.interpreters`` (``mlir``, ``ad``, ``batching``)."""
from traxla.extend import core  # noqa: F401

__all__ = ["core"]
