"""Where ``JitFunction``'s programs run when arguments are placed: programs over a mesh
(one SPMD executable keyed on placements), operands that follow committed ones, and results
committed to the default device (pinned) or left uncommitted, as JAX's."""
from __future__ import annotations

import numpy as np

from traxla.api.hi_lowering import HiProgram, jaxpr_is_high
from traxla import tree_util
from traxla.api import jit_hooks
from traxla.api.call_signatures import Entry as _Entry
from traxla.api.jit_caches import _trace_context
from traxla.ir.avals import ShapedArray
from traxla.ir.sharding import PartitionSpec
from traxla.runtime import ArrayImpl, transfer_guard
from traxla.runtime.array import check_not_deleted, default_sharding, to_default_device
from traxla.runtime.backend import get_backend
from traxla.runtime.placement import (NamedSharding, default_placement,
    pinned_default as _pinned_default, pinned_placement, device_put_placed, uncommitted)


class JitPlacement:
    """``JitFunction``'s calls on a mesh (a base class of it; ``jit_function.py``)."""

    def _placed_on(self, arrays, mesh):
        out = []
        for a in arrays:
            if a._placement is None:
                dst = NamedSharding(mesh, PartitionSpec())
                with transfer_guard.moving(a, lambda: dst):
                    a = device_put_placed(np.asarray(a), a.aval, dst)
            out.append(a)
        return out

    def _call_sharded(self, args, kwargs, arrays, in_tree, static_key, mesh=None):
        """Arguments on a mesh: one SPMD executable over its devices, keyed on placements."""
        placed = [a._placement for a in arrays if a._placement is not None]
        mesh = placed[0].mesh if placed else mesh
        for p in placed:
            if not isinstance(p, NamedSharding):
                raise ValueError(f"jit got an argument placed by {p}, which has no mesh spec; "
                                 "device_put it with a NamedSharding first.")
            if p.mesh != mesh:
                raise ValueError(f"jit got arguments on different meshes: {mesh} and {p.mesh}")
        leaves = None
        for i, a in enumerate(arrays):
            if a._placement is None:
                dst = NamedSharding(mesh, PartitionSpec())
                if leaves is None:  # the user's own Arrays move device to device
                    leaves = [id(x) for x in tree_util.tree_leaves(self._split_static(
                        args, kwargs)[:2])] if transfer_guard.active("device_to_device") else ()
                with (transfer_guard.moving(a, lambda: dst) if id(a) in leaves
                      else transfer_guard.internal()):
                    arrays[i] = device_put_placed(a.physical_value(), a.aval, dst)
        avals = tuple(a.aval for a in arrays)
        placements = tuple(a._placement for a in arrays)
        key = (in_tree, static_key, avals, _trace_context(), placements)
        entry = self._compiled.get(key)
        if entry is None:
            def build():
                jit_hooks.on_compile_miss(self, key, args, kwargs)
                closed, out_tree = self._trace(key[:4], args, kwargs, avals)
                if jaxpr_is_high(closed):  # high-level (hijax) values inside: hi_lowering.py
                    return HiProgram(self, closed, out_tree)
                program = self._lower_program(closed, self._donated_leaves(args, kwargs, in_tree),
                                              placements, mesh, out_tree)
                executable = self._executable(program, closed, mesh, self.compiler_options)
                jit_hooks.after_compile(self, closed, program, executable)
                return _Entry(executable, out_tree, program.kept)
            entry = self._compiled.get_or_create(key, build)
        if type(entry) is HiProgram:
            return entry(arrays)
        check_not_deleted(arrays)  # a deleted multi-device buffer must not reach PJRT
        outs = entry.execute(arrays)
        return tree_util.tree_unflatten(entry.out_tree, outs)


def _follow_committed(arrays, target):
    """JAX's rule for operands ``default_device`` placed (uncommitted): they go where the
    committed operands are, else where the program runs (``target``; None: the default
    device). Returns the arrays, the mesh to run on, and whether that is the
    ``default_device``'s own (its results are then uncommitted too)."""
    committed = next((a._placement.mesh for a in arrays
                      if a._placement is not None and a._placement.committed), None)
    mesh = committed or target
    default = default_placement()
    follows_default = (committed is None and default is not None and not default.committed
                       and mesh is default.mesh)
    moved = []
    for a in arrays:
        p = a._placement
        if p is not None and not p.committed and p.mesh is not mesh and p.mesh != mesh:
            dst = NamedSharding(mesh, PartitionSpec()) if mesh is not None else None
            with transfer_guard.moving(a, lambda: dst if dst is not None else default_sharding()):
                host = np.asarray(a)
                aval = ShapedArray(a.shape, a.dtype, a.aval.weak_type)
                a = (device_put_placed(host, aval, dst)
                     if mesh is not None else to_default_device(host, aval))
        moved.append(a)
    return moved, mesh, follows_default


def pinned_results(outs):
    """``outs`` (a default-device program's results) committed to the default device, as
    JAX commits the results of committed operands."""
    placement = _pinned_default[0] or pinned_placement(get_backend().devices[0])
    for out in tree_util.tree_leaves(outs):
        if type(out) is ArrayImpl and out._placement is None:
            out._placement = placement
    return outs


def _uncommitted_results(outs):
    for out in tree_util.tree_leaves(outs):
        if isinstance(out, ArrayImpl) and out._placement is not None:
            out._placement = uncommitted(out._placement)
    return outs
