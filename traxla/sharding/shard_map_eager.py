"""Eager ``shard_map``: called outside any transformation, the body runs one primitive
at a time, as JAX 0.10's does, on every device's block at once. Each value of the body
is one global Array whose leading dimension has one entry per device (split over all
the mesh's axes); a primitive is applied by a one-equation SPMD program, a jitted
``shard_map`` of the primitive on the blocks. So ``print(x)`` in the body shows every
device's block ("On cpu:0 at mesh coordinates (i,) = (0,):") and collectives run as they
do under ``jit``."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import Literal
from traxla.ir.sharding import PartitionSpec
from traxla.ir.thread_state import axis_env
from traxla.primitives import aval_of
from traxla.primitives.shapes import expand_dims, squeeze
from traxla.tracer import Tracer
from traxla.tracer.traces import Trace, current_trace, set_current_trace
from traxla.errors import UnexpectedTracerError
import traxla.api as _api


_appliers: dict = {}  # (mesh, axes, primitive, params) -> jitted one-equation program
_APPLIERS_LIMIT = 1024


def _add_leading(x):
    return expand_dims(x, (0,))


def _drop_leading(x):
    return squeeze(x, (0,))


class ShardMapTrace(Trace):
    """The trace of an eager shard_map body over ``mesh`` (every axis Manual)."""

    def __init__(self, mesh, shard_map):
        self.mesh = mesh
        self.axes = tuple(mesh.axis_names)
        self.stacked = PartitionSpec(self.axes)  # the leading (device) dimension's spec
        self._shard_map = shard_map  # the traced shard_map (this module sits beside it)

    def leak_error(self, tracer):
        return UnexpectedTracerError(
            f"Encountered an unexpected tracer: {tracer.aval} of an eager shard_map body that "
            "has returned. A value computed in the body can leave it only as an output.")

    def _program(self, fun, in_specs, out_specs):
        return _api.jit(self._shard_map(fun, mesh=self.mesh, in_specs=in_specs,
                                        out_specs=out_specs))

    def to_val(self, x):
        """``x`` as a stacked global Array: a value of the body is already one; anything
        else (a constant, an Array from outside) is the same on every device."""
        if isinstance(x, ShardMapTracer) and x._trace is self:
            return x.val
        if type(x) is Literal:
            x = x.val
        return self.unmatch(x, PartitionSpec())

    def unmatch(self, x, spec):
        """An argument split by ``spec`` as a stacked global Array (one block per device)."""
        key = (self.mesh, self.axes, "unmatch", spec)
        fn = _appliers.get(key)
        if fn is None:
            fn = _remember(key, self._program(_add_leading, spec, self.stacked))
        with set_current_trace(self.parent):
            return fn(x)

    def match(self, val, spec):
        """The stacked blocks of an output reassembled as ``spec`` says."""
        key = (self.mesh, self.axes, "match", spec)
        fn = _appliers.get(key)
        if fn is None:
            fn = _remember(key, self._program(_drop_leading, self.stacked, spec))
        with set_current_trace(self.parent):
            return fn(val)

    def process_primitive(self, prim, args, params):
        vals = [self.to_val(a) for a in args]
        try:
            key = (self.mesh, self.axes, prim, tuple(params.items()))
            fn = _appliers.get(key)
        except TypeError:  # an unhashable parameter: a program for this call only
            key, fn = None, None
        if fn is None:
            def apply(*blocks):
                out = prim.bind(*[_drop_leading(b) for b in blocks], **params)
                if prim.multiple_results:
                    return [_add_leading(o) for o in out]
                return _add_leading(out)
            fn = self._program(apply, self.stacked, self.stacked)
            if key is not None:
                _remember(key, fn)
        with set_current_trace(self.parent):
            out = fn(*vals)
        if prim.multiple_results:
            return [ShardMapTracer(self, o) for o in out]
        return ShardMapTracer(self, out)


def _remember(key, fn):
    if len(_appliers) >= _APPLIERS_LIMIT:
        _appliers.clear()
    _appliers[key] = fn
    return fn


class ShardMapTracer(Tracer):
    """A value of an eager shard_map body: every device's block, stacked."""

    __slots__ = ("val", "_aval")

    def __init__(self, trace, val):
        self._trace = trace
        self.val = val
        a = aval_of(val)
        self._aval = ShapedArray(a.shape[1:], a.dtype, a.weak_type)

    @property
    def aval(self):
        return self._aval

    def __str__(self):
        # as JAX's: each device's block, in mesh order, with its mesh coordinates
        self._check_alive()
        mesh = self._trace.mesh
        blocks = [str(b) for b in np.asarray(self.val)]  # (an Array's str is its value's)
        names = f"({', '.join(map(str, mesh.axis_names))},)"
        return "\n".join(f"On {device} at mesh coordinates {names} = {idx}:\n{block}\n"
                         for (idx, device), block in zip(np.ndenumerate(mesh.devices), blocks))

    __repr__ = __str__  # as JAX's (for debuggers' ``p x``)


def run_eager(shard_map, f, mesh, in_specs, out_specs_for, args_flat, in_tree):
    """Runs ``f`` eagerly on the blocks of ``args_flat`` (split by ``in_specs``); the
    outputs, reassembled by the specs ``out_specs_for(out_tree)`` returns."""
    trace = ShardMapTrace(mesh, shard_map)
    trace.parent = current_trace()
    tracers = [ShardMapTracer(trace, trace.unmatch(x, s)) for x, s in zip(args_flat, in_specs)]
    axis_env.append(mesh.abstract_mesh)
    try:
        with set_current_trace(trace):
            out = f(*tree_util.tree_unflatten(in_tree, tracers))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            vals = [trace.to_val(o) for o in out_leaves]
    finally:
        axis_env.pop()
        trace.invalidate()
    specs = out_specs_for(out_tree)
    return tree_util.tree_unflatten(out_tree, [trace.match(v, s) for v, s in zip(vals, specs)])
