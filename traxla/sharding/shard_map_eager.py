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
from traxla.ir.sharding_rules import infer_avals
from traxla.ir.vma import active as vma_active
from traxla.primitives import aval_of
from traxla.primitives.shapes import expand_dims, squeeze
from traxla.tracer import Tracer
from traxla.tracer.traces import Trace, current_trace, set_current_trace
from traxla.errors import UnexpectedTracerError
import traxla.api as _api
from traxla.sharding.specs import _broadcast_specs, _spec_vma, check_out_vma


_appliers: dict = {}  # (mesh, axes, primitive, params) -> jitted one-equation program
_APPLIERS_LIMIT = 1024


def _add_singleton(x):
    return expand_dims(x, (0,))


def _rem_singleton(x):
    return squeeze(x, (0,))


class ShardMapTrace(Trace):
    """The trace of an eager shard_map body over ``mesh`` (every axis Manual)."""

    def __init__(self, mesh, shard_map):
        self.mesh = mesh
        self.axes = tuple(mesh.axis_names)
        # the leading (device) dimension's spec
        self.stacked = PartitionSpec(self.axes[0] if len(self.axes) == 1 else self.axes)
        self._shard_map = shard_map  # the traced shard_map (this module sits beside it)

    def leak_error(self, tracer):
        return UnexpectedTracerError(
            f"Encountered an unexpected tracer: {tracer.aval} of an eager shard_map body that "
            "has returned. A value computed in the body can leave it only as an output.")

    def _program(self, fun, in_specs, out_specs):
        # (a program of the implementation: the body's own types were checked already)
        return _api.jit(self._shard_map(fun, mesh=self.mesh, in_specs=in_specs,
                                        out_specs=out_specs, check_vma=False))

    def to_val(self, x):
        """``x`` as a stacked global Array: a value of the body is already one; anything
        else (a constant, an Array from outside) is the same on every device."""
        if isinstance(x, ShardMapTracer) and x._trace is self:
            return x.val
        if type(x) is Literal:
            x = x.val
        return self.unmatch(x, PartitionSpec())

    @staticmethod
    def local_aval(x):
        """The type of ``x`` as one device's block (a constant varies over no axis)."""
        if isinstance(x, ShardMapTracer):
            return x.aval
        return x.aval if type(x) is Literal else aval_of(x)

    def unmatch(self, x, spec):
        """An argument split by ``spec`` as a stacked global Array (one block per device)."""
        key = (self.mesh, self.axes, "unmatch", spec)
        fn = _appliers.get(key)
        if fn is None:
            fn = _remember(key, self._program(_add_singleton, spec, self.stacked))
        with set_current_trace(self.parent):
            return fn(x)

    def match(self, val, spec):
        """The stacked blocks of an output reassembled as ``spec`` says."""
        key = (self.mesh, self.axes, "match", spec)
        fn = _appliers.get(key)
        if fn is None:
            fn = _remember(key, self._program(_rem_singleton, self.stacked, spec))
        with set_current_trace(self.parent):
            return fn(val)

    def process_primitive(self, prim, args, params):
        # the blocks' types (their varying manual axes too), as a staged body's would be
        out_avals = infer_avals(prim, [self.local_aval(a) for a in args], params)
        vals = [self.to_val(a) for a in args]
        try:
            key = (self.mesh, self.axes, prim, tuple(params.items()))
            fn = _appliers.get(key)
        except TypeError:  # an unhashable parameter: a program for this call only
            key, fn = None, None
        if fn is None:
            def apply(*blocks):
                out = prim.bind(*[_rem_singleton(b) for b in blocks], **params)
                if prim.multiple_results:
                    return [_add_singleton(o) for o in out]
                return _add_singleton(out)
            fn = self._program(apply, self.stacked, self.stacked)
            if key is not None:
                _remember(key, fn)
        with set_current_trace(self.parent):
            out = fn(*vals)
        if prim.multiple_results:
            return [ShardMapTracer(self, o, a.vma) for o, a in zip(out, out_avals)]
        return ShardMapTracer(self, out, out_avals.vma)


def _remember(key, fn):
    if len(_appliers) >= _APPLIERS_LIMIT:
        _appliers.clear()
    _appliers[key] = fn
    return fn


class ShardMapTracer(Tracer):
    """A value of an eager shard_map body: every device's block, stacked."""

    __slots__ = ("val", "_aval")

    def __init__(self, trace, val, vma=()):
        self._trace = trace
        self.val = val
        a = aval_of(val)
        self._aval = ShapedArray(a.shape[1:], a.dtype, a.weak_type, vma=vma)

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


def run_eager(shard_map, f, mesh, in_specs, out_specs, check_vma, args_flat, in_tree):
    """Runs ``f`` eagerly on the blocks of ``args_flat`` (split by ``in_specs``); the
    outputs, reassembled by ``out_specs`` (checked against the outputs' varying manual
    axes with ``check_vma``)."""
    trace = ShardMapTrace(mesh, shard_map)
    trace.parent = current_trace()
    abstract = mesh.abstract_mesh
    tracers = [ShardMapTracer(trace, trace.unmatch(x, s),
                              _spec_vma(abstract, s) if check_vma else ())
               for x, s in zip(args_flat, in_specs)]
    axis_env.append(abstract)
    vma_active[0] += bool(check_vma)
    try:
        with set_current_trace(trace):
            out = f(*tree_util.tree_unflatten(in_tree, tracers))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            avals = [trace.local_aval(o) for o in out_leaves]
            vals = [trace.to_val(o) for o in out_leaves]
    finally:
        vma_active[0] -= bool(check_vma)
        axis_env.pop()
        trace.invalidate()
    specs = _broadcast_specs(out_specs, out_tree, "out_specs")
    if check_vma:  # (as JAX's, the check of the program that reassembles the outputs)
        for spec, aval in zip(specs, avals):
            check_out_vma(_rem_singleton, abstract, spec, [spec], [aval])
    return tree_util.tree_unflatten(out_tree, [trace.match(v, s) for v, s in zip(vals, specs)])
