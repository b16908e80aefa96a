"""Batching rules from user code, as ``jax.interpreters.batching``:
``primitive_batchers[p] = rule(batched_args, batch_dims, **params) -> (out, out_dims)``
(both tuples, as JAX's);
a batch dim is an int, or ``not_mapped`` (None) for an unbatched operand."""
from __future__ import annotations

from collections.abc import MutableMapping

from traxla.interpreters.ad import _values
import numpy as np

from traxla import primitives as _prims
from traxla.base.unsupported import fill as _fill
from traxla.batching.batch_trace import (BatchTrace, BatchTracer, batching_rules,  # noqa: F401
                                         bdim_at_front, broadcast_batch, current_axis_name,
                                         register_vmappable, rules_for_unbatched)

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

def broadcast(x, sz, axis, mesh_axis):
    """``x`` with a new axis of size ``sz`` at ``axis`` (``mesh_axis``: the mesh axis it is
    sharded over, which traxla's batching does not carry: only None)."""
    if mesh_axis is not None:
        raise NotImplementedError("batching.broadcast(..., mesh_axis=...) is not supported "
                                  "by traxla")
    return broadcast_batch(x, sz, axis)


def unregister_vmappable(data_type) -> None:
    """Does nothing, as JAX's (whose registrations are never removed either)."""


def defvectorized(prim):
    """``prim`` maps elementwise over its one batched operand's batch axis."""
    def rule(args, dims, **params):
        out = prim.bind(*args, **params)
        return (out, (dims[0],) * len(out)) if prim.multiple_results else (out, dims[0])
    primitive_batchers[prim] = rule


def defbroadcasting(prim):
    """``prim`` broadcasts its operands (NumPy-style, scalars included) against each other:
    batched operands are moved to axis 0, unbatched ones broadcast there, as JAX's."""
    def rule(args, dims, **params):
        shape, dim = next((np.shape(x), d) for x, d in zip(args, dims) if d is not not_mapped)
        if all(np.shape(x) == shape and d == dim for x, d in zip(args, dims) if np.ndim(x)):
            out = prim.bind(*args, **params)
            return (out, (dim,) * len(out)) if prim.multiple_results else (out, dim)
        size = shape[dim]
        args = [bdim_at_front(x, d, size) if np.ndim(x) else x for x, d in zip(args, dims)]
        nd = max(np.ndim(x) for x in args)
        args = [x if d is not_mapped or np.ndim(x) == nd
                else _prims.expand_dims(x, tuple(range(np.ndim(x), nd)))
                for x, d in zip(args, dims)]
        out = prim.bind(*args, **params)
        return (out, (0,) * len(out)) if prim.multiple_results else (out, 0)
    primitive_batchers[prim] = rule


def defreducer(prim):
    """``prim(operand, axes=..., **params)`` reduces over ``axes``: batched, the axes are
    renumbered around the batch axis, whose position in the result is returned (JAX's
    ``reducer_batcher``)."""
    def rule(args, dims, *, axes, **params):
        operand, = args
        bdim, = dims
        axes = tuple(np.where(np.less(axes, bdim), axes, np.add(axes, 1)))
        bdim_out = int(list(np.delete(np.arange(np.ndim(operand)), axes)).index(bdim))
        if "input_shape" in params:
            params = dict(params, input_shape=np.shape(operand))
        if params.get("out_sharding") is not None:
            raise NotImplementedError("batching.defreducer: a reduction with an out_sharding "
                                      "under vmap is not supported by traxla")
        return prim.bind(operand, axes=axes, **params), bdim_out
    primitive_batchers[prim] = rule


_fill(globals(), "JAX's batching rules with axis data (traxla's rules get the axis size)",
      constants="fancy_primitive_batchers")

__all__ = ["primitive_batchers", "axis_primitive_batchers", "not_mapped", "BatchTrace",
           "BatchTracer", "bdim_at_front", "broadcast", "defbroadcasting", "defvectorized",
           "register_vmappable", "unregister_vmappable", "defreducer"]
