"""vmap: a batching trace and a batching-rule registry (imports tracer/, ir/, lax)."""
from . import rules, control_flow, indexing, collectives  # noqa: F401  (registers the rules)
from . import special  # noqa: F401,E402  (lgamma, digamma, erfc, square, complex numbers, tile)
from .core import BatchTrace, BatchTracer, batch_jaxpr, batching_rules, register_batching, vmap

__all__ = ["vmap", "BatchTrace", "BatchTracer", "batch_jaxpr", "batching_rules", "register_batching"]
