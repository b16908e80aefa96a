"""``traxla.extend``: the API for writing interpreters of jaxprs and new primitives from
user code, as ``jax.extend``: ``core`` (jaxprs, ``Primitive``, and ``core.primitives``, every
primitive JAX lists), ``linear_util``, ``backend``, ``lowering``, ``mlir``, ``random``,
``sharding``, ``source_info_util``, ``xla``, ``ifrt_programs``; the rule registries are in
``traxla.interpreters`` (``mlir``, ``ad``, ``batching``)."""
from traxla.extend import (backend, core, linear_util, lowering, mlir, random,  # noqa: F401
                           sharding, source_info_util, xla)

__all__ = ["backend", "core", "linear_util", "lowering", "mlir", "random", "sharding",
           "source_info_util", "xla"]
