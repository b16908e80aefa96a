"""vmap: a batching trace and a batching-rule registry (imports tracer/, ir/, lax)."""
from traxla.batching import rules  # noqa: F401  (registers the rules)
from traxla.batching.batch_trace import BatchTrace, BatchTracer, batch_jaxpr, batching_rules, register_batching, vmap

__all__ = ["vmap", "BatchTrace", "BatchTracer", "batch_jaxpr", "batching_rules", "register_batching"]
