"""vmap: a batching trace and a batching-rule registry (the machinery). The batching rules
live in ``batching/rules/``, a layer above ``lax`` and ``numpy``; they register into
``batching_rules`` when ``traxla`` is imported."""
from traxla.batching.batch_trace import (BatchTrace, BatchTracer, batch_jaxpr, batching_rules,
                                        register_batching, register_vmappable, vmap)

__all__ = ["vmap", "BatchTrace", "BatchTracer", "batch_jaxpr", "batching_rules", "register_batching",
           "register_vmappable"]
