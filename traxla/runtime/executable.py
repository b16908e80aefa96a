"""Compiled programs: compile a verified module, check avals, execute, wrap results."""
from __future__ import annotations

import time

from traxla.ir.config import config as _config

import numpy as np

from traxla.ir.avals import ShapedArray, physical_aval
from traxla.ir.dtypes import float0
from traxla.ir.literals import float0_zeros
from traxla.ir.rules.tokens import abstract_token
from traxla.lowering import host_callbacks_of, lower_jaxpr
from traxla.lowering.mlir import owned_by_this_thread
from traxla.lowering.registry import custom_call_libraries
from traxla.runtime import compilation_cache, compiler as _compiler, xla_adapter as xla
from traxla.runtime.array import (ArrayImpl, arrays_from_buffers, check_not_deleted, device_put_numpy,
                    intern_aval, make_array, Token)
from traxla.runtime.backend import get_backend
from traxla.runtime.placement import placement_from_hlo, typed_by_placement
from traxla.lowering.rules.callbacks import take_callback_error

_flags = _config.current  # this thread's flags (a thread-local view)
# How a token output is received (its buffer holds no data; only a Token ever wraps it)
_TOKEN_STORAGE = ShapedArray((0,), np.dtype(np.bool_))


class _CompiledProgram:
    """What XLA says about a compiled program (``self.loaded``), for both kinds of executable."""

    __slots__ = ()

    def as_text(self) -> str:
        return xla.optimized_hlo_text(self.loaded)

    def cost_analysis(self) -> dict:
        return xla.cost_analysis(self.loaded)

    def memory_analysis(self):
        return xla.memory_analysis(self.loaded)


class Executable(_CompiledProgram):
    """A loaded executable plus what the hot path needs: its handlers and out avals."""

    __slots__ = ("loaded", "in_avals", "out_avals", "handlers", "compile_seconds", "in_arity", "run",
                 "parts", "host_callbacks", "name", "special_outs", "__weakref__")

    def __init__(self, module, in_avals, out_avals, compiler_options=None):
        backend = get_backend()
        _register_libraries()
        start = time.perf_counter()
        self.host_callbacks = host_callbacks_of(module)
        devices = [backend.default_device]
        owned = owned_by_this_thread(module)  # see xla.compilable
        self.loaded = _compiler.backend_compile_and_load(
            backend, lambda: compilation_cache.compile_or_load(
                backend.client, module, devices, self.host_callbacks, compiler_options,
                lambda: xla.compile(backend.client, module, devices, self.host_callbacks,
                                    compiler_options, owned), in_avals=in_avals))
        self.compile_seconds = time.perf_counter() - start
        self.in_avals = tuple(in_avals)
        self.in_arity = len(self.in_avals)
        self.out_avals = tuple([intern_aval(a) for a in out_avals])
        self.handlers = xla.result_handlers(
            [_TOKEN_STORAGE if a is abstract_token else physical_aval(a).strip_weak_type()
             for a in out_avals], backend.default_sharding)
        self.special_outs = _special_outs(self.out_avals)
        self.run = _runner(self.loaded, self.handlers, self.host_callbacks, single_device=True)
        # ``run`` as two C calls that the hit paths inline (see xla.runner_parts); None for
        # programs with callbacks, whose runner waits for them
        self.parts = None if self.host_callbacks else xla.runner_parts(self.loaded)
        self.name = None  # the jitted function's (or the primitive's) name, for messages

    def execute(self, arrays) -> list:
        """Runs on ``arrays`` (traxla Arrays whose avals were checked by the caller)."""
        if _flags.no_execution:
            raise no_execution_error(self.name)
        try:
            bufs = self.run([a._buf for a in arrays])
        except xla.RuntimeErrorType:
            check_not_deleted(arrays)
            raise
        outs = arrays_from_buffers(self.out_avals, bufs)
        if self.special_outs:
            _hand_back_special(outs, self.out_avals, self.special_outs)
        return outs


def _special_outs(out_avals) -> tuple:
    """The outputs not handed back as Arrays: XLA tokens (``lax.create_token``), as Token
    objects, and float0 values, as JAX's host-side ``TypedNdArray`` zeros (a float0 value
    holds no data: JAX's result handler never keeps its buffer)."""
    return tuple(i for i, a in enumerate(out_avals)
                 if a is abstract_token or getattr(a, "dtype", None) == float0)


def _hand_back_special(outs, out_avals, special):
    for i in special:
        aval = out_avals[i]
        outs[i] = (Token(outs[i]._buf) if aval is abstract_token
                   else float0_zeros(aval.shape, aval.update(sharding=None)))


def _register_libraries():
    for name in tuple(custom_call_libraries):
        xla.register_custom_call_library(name)


def no_execution_error(name) -> RuntimeError:
    """JAX's error for a program run under ``no_execution``."""
    return RuntimeError(f"JAX tried to execute function jit({name}), but the no_execution "
                        "config option is set")


def compile_jaxpr(closed, name: str) -> Executable:
    module = lower_jaxpr(closed, name)
    exe = Executable(module, closed.in_avals, closed.out_avals)
    exe.name = name
    return exe


__all__ = ["Executable", "compile_jaxpr", "ArrayImpl", "device_put_numpy"]


class ShardedExecutable(_CompiledProgram):
    """An SPMD program over a mesh's devices; outputs carry their placements."""

    def __init__(self, module, in_avals, out_avals, mesh, out_placements=None,
                 compiler_options=None):
        raw = mesh.raw_devices()
        # the mesh's own platform: a mesh of CPU devices beside a TPU compiles for the CPU
        backend = get_backend(raw[0].platform) if raw else get_backend()
        _register_libraries()
        start = time.perf_counter()
        self.host_callbacks = host_callbacks_of(module)
        owned = owned_by_this_thread(module)  # see xla.compilable
        # persisted as single-device programs are, keyed by their device assignment too
        self.loaded = _compiler.backend_compile_and_load(
            backend, lambda: compilation_cache.compile_or_load(
                backend.client, module, raw, self.host_callbacks, compiler_options,
                lambda: xla.compile_spmd(backend.client, module, raw, mesh.size,
                                         self.host_callbacks, compiler_options, owned),
                num_partitions=mesh.size, in_avals=in_avals,
                spmd_options=xla.spmd_compile_options(raw, mesh.size, compiler_options)))
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
        self.out_avals = tuple(map(typed_by_placement, self.out_avals, self.out_placements))
        self.handlers = xla.result_handlers_per_output(
            [physical_aval(a).strip_weak_type().update(sharding=None) for a in out_avals],
            [xla.gspmd_sharding(raw, h, None if _memory_kind(a) == "device" else _memory_kind(a))
             for h, a in zip(hlos, out_avals)])
        self.run = _runner(self.loaded, self.handlers, self.host_callbacks)
        self.special_outs = _special_outs(self.out_avals)
        self.name = None

    def execute(self, arrays) -> list:
        if _flags.no_execution:
            raise no_execution_error(self.name)
        try:
            bufs = self.run([a._buf for a in arrays])
        except xla.RuntimeErrorType:
            check_not_deleted(arrays)
            raise
        outs = [make_array(aval, buf, p)
                for aval, buf, p in zip(self.out_avals, bufs, self.out_placements)]
        if self.special_outs:
            _hand_back_special(outs, self.out_avals, self.special_outs)
        return outs


def _memory_kind(aval):
    return "pinned_host" if aval.memory_space == "host" else "device"


def _runner(loaded, handlers, host_callbacks, single_device=False):
    """Programs without callbacks run asynchronously; those with callbacks run to completion
    before the call returns, so that their effects have happened (in order) and a callback's
    exception surfaces here, as a Python exception naming the callback. Single-device
    programs run without jaxlib's per-call traceback record (it is never freed)."""
    if not host_callbacks:
        return xla.make_runner(loaded, handlers, quiet_tracebacks=single_device)
    return xla.make_synchronous_runner(loaded, handlers, _callback_failure,
                                       quiet_tracebacks=single_device)


def _callback_failure(runtime_error):
    err = take_callback_error()
    if err is None:
        return runtime_error
    return err
