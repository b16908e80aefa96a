"""``traxla.extend``: the API for writing interpreters of jaxprs and new primitives from
user code, as ``jax.extend`` (``extend.core``), with the rule registries in
``traxla.interpreters`` (``mlir``, ``ad``, ``batching``)."""
from traxla.extend import core, linear_util, source_info_util  # noqa: F401

__all__ = ["core", "linear_util", "source_info_util"]
