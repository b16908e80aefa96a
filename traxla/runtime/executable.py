"""Compiled programs: compile a verified module, check avals, execute, wrap results."""
from __future__ import annotations

import time

from ..ir.avals import physical_aval
from ..lowering import lower_jaxpr
from . import xla_adapter as xla
from .array import Array, device_put_numpy
from .backend import get_backend


class Executable:
    """A loaded executable plus what the hot path needs: its handlers and out avals."""

    __slots__ = ("loaded", "in_avals", "out_avals", "handlers", "compile_seconds", "in_arity", "run",
                 "__weakref__")

    def __init__(self, module, in_avals, out_avals):
        backend = get_backend()
        start = time.perf_counter()
        self.loaded = xla.compile(backend.client, module, [backend.default_device])
        self.compile_seconds = time.perf_counter() - start
        self.in_avals = tuple(in_avals)
        self.in_arity = len(self.in_avals)
        self.out_avals = tuple(out_avals)
        self.handlers = xla.result_handlers(
            [physical_aval(a).strip_weak_type() for a in out_avals], backend.default_sharding)
        self.run = xla.make_runner(self.loaded, self.handlers)

    def execute(self, arrays) -> list:
        """Runs on ``arrays`` (traxla Arrays whose avals were checked by the caller)."""
        bufs = self.run([a._buf for a in arrays])
        return [Array(aval, buf) for aval, buf in zip(self.out_avals, bufs)]

    def as_text(self) -> str:
        return xla.optimized_hlo_text(self.loaded)

    def cost_analysis(self) -> dict:
        return xla.cost_analysis(self.loaded)

    def memory_analysis(self):
        return xla.memory_analysis(self.loaded)


def compile_jaxpr(closed, name: str) -> Executable:
    module = lower_jaxpr(closed, name)
    return Executable(module, closed.in_avals, closed.out_avals)


__all__ = ["Executable", "compile_jaxpr", "Array", "device_put_numpy"]


class ShardedExecutable:
    """An SPMD program over a mesh's devices; outputs carry their placements."""

    def __init__(self, module, in_avals, out_avals, mesh, out_placements=None):
        from .placement import placement_from_hlo
        backend = get_backend()
        raw = mesh.raw_devices()
        start = time.perf_counter()
        self.loaded = xla.compile_spmd(backend.client, module, raw, mesh.size)
        self.compile_seconds = time.perf_counter() - start
        self.in_avals = tuple(in_avals)
        self.in_arity = len(self.in_avals)
        self.out_avals = tuple(out_avals)
        hlos = xla.output_hlo_shardings(self.loaded)
        if hlos is None:  # one partition: every output is whole on the mesh's one device
            hlos = [xla.replicated_sharding()] * len(out_avals)
        if out_placements is None:
            out_placements = [placement_from_hlo(h, mesh, a, _memory_kind(a))
                              for h, a in zip(hlos, out_avals)]
        self.out_placements = list(out_placements)
        self.handlers = xla.result_handlers_per_output(
            [physical_aval(a).strip_weak_type().update(sharding=None) for a in out_avals],
            [xla.gspmd_sharding(raw, h, None if _memory_kind(a) == "device" else _memory_kind(a))
             for h, a in zip(hlos, out_avals)])
        self.run = xla.make_runner(self.loaded, self.handlers)

    def execute(self, arrays) -> list:
        bufs = self.run([a._buf for a in arrays])
        return [Array(aval, buf, p) for aval, buf, p in zip(self.out_avals, bufs, self.out_placements)]

    def as_text(self) -> str:
        return xla.optimized_hlo_text(self.loaded)

    def cost_analysis(self) -> dict:
        return xla.cost_analysis(self.loaded)

    def memory_analysis(self):
        return xla.memory_analysis(self.loaded)


def _memory_kind(aval):
    return "pinned_host" if aval.memory_space == "host" else "device"
