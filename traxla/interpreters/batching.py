"""Batching rules from user code, as ``jax.interpreters.batching``:
``primitive_batchers[p] = rule(batched_args, batch_dims, **params) -> (out, out_dims)``
(both tuples, as JAX's);
a batch dim is an int, or ``not_mapped`` (None) for an unbatched operand."""
from __future__ import annotations

from collections.abc import MutableMapping

from traxla.interpreters.ad import _values
from traxla.batching.batch_trace import (BatchTrace, BatchTracer, batching_rules,
                                         current_axis_name, rules_for_unbatched)

# JAX's class lives in jax.interpreters.batching; code that tells tracers apart by the
# class's path (the primitives page's tracing helper) finds this one there too
BatchTracer.__module__ = __name__

not_mapped = None


class _Batchers(MutableMapping):
    """JAX's rule signature over traxla's registry (whose rules also get the axis size)."""

    def __init__(self):
        self._user: dict = {}

    def __setitem__(self, prim, rule):
        self._user[prim] = rule
        batching_rules[prim] = lambda size, vals, dims, **params: rule(
            tuple(_values(vals)), tuple(dims), **params)

    def __getitem__(self, prim):
        return self._user[prim]

    def __delitem__(self, prim):
        del self._user[prim]
        batching_rules.pop(prim, None)

    def __iter__(self):
        return iter(self._user)

    def __len__(self):
        return len(self._user)


primitive_batchers = _Batchers()


class _AxisBatchers:
    """JAX's older signature, ``axis_primitive_batchers[p] = rule(axis_size, axis_name,
    trace_type, batched_args, batch_dims, **params)`` (``trace_type`` is None, as JAX's
    shim passes). Like JAX's, such a rule runs even when no operand is batched."""

    def __setitem__(self, prim, rule):
        def wrapped(size, vals, dims, **params):
            return rule(size, current_axis_name(), None, tuple(_values(vals)), tuple(dims),
                        **params)
        batching_rules[prim] = wrapped
        rules_for_unbatched.add(prim)


axis_primitive_batchers = _AxisBatchers()

__all__ = ["primitive_batchers", "axis_primitive_batchers", "not_mapped", "BatchTrace",
           "BatchTracer"]
