"""The one place traxla touches jaxlib's Mosaic TPU bindings (``jaxlib.mosaic.python.tpu``,
its ``_tpu_ext`` extension and the ``mosaic-serde`` pass) and the upstream MLIR dialects a
kernel is written in (arith, math, memref, scf, vector, func). Version-fragile contacts are
here and nowhere else:

- Mosaic modules are built in a context of their own (one per thread), never in the
  StableHLO context of ``traxla.lowering.mlir``: the custom call carries the kernel as
  bytes, so the two never share an object;
- importing the bindings appends ``jax.jaxlib.mosaic.python`` to MLIR's dialect-module
  search path, and a lookup along it imports the ``jax`` package: traxla removes that
  entry (tpu ops then get their generated classes or generic views; nothing else changes);
- serialization is JAX's: the ``mosaic-serde`` pass at a target version, then MLIR
  bytecode (version 0). ``SERDE_VERSION`` is the version JAX 0.10.2 writes when it exports
  (``_FWD_COMPAT_VERSION``); every libtpu that runs JAX 0.10.2 reads it."""
from __future__ import annotations

import io
import threading

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import arith, func, math, memref, scf, vector  # noqa: F401
from jaxlib.mlir.dialects._ods_common import _cext
from jaxlib.mlir.passmanager import PassManager
from jaxlib.mosaic.python import tpu  # noqa: F401

_cext.globals.dialect_search_modules = [
    m for m in _cext.globals.dialect_search_modules if not m.startswith("jax.")]

SERDE_VERSION = 11


class _Thread(threading.local):
    context = None


_thread = _Thread()


def context() -> ir.Context:
    """This thread's Mosaic context (arith, math, memref, scf, vector, func and tpu)."""
    ctx = _thread.context
    if ctx is None:
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        ctx = ir.Context()
        ctx.append_dialect_registry(registry)
        tpu.register_dialect(ctx)
        ctx.load_all_available_dialects()
        _thread.context = ctx
    return ctx


def memory_space(name: str) -> ir.Attribute:
    return ir.Attribute.parse(f"#tpu.memory_space<{name}>")


def serialize(module: ir.Module, version: int = SERDE_VERSION) -> bytes:
    """The bytes a ``tpu_custom_call`` carries: the module through ``mosaic-serde`` at
    ``version``, as MLIR bytecode (the module is left as it was)."""
    ctx = module.context
    with ctx, module.operation.location:
        clone = module.operation.clone()
        previous = ctx.allow_unregistered_dialects
        ctx.allow_unregistered_dialects = True
        try:
            PassManager.parse("builtin.module(mosaic-serde{serialize=true "
                              f"target-version={version}}})").run(clone)
        finally:
            ctx.allow_unregistered_dialects = previous
        buffer = io.BytesIO()
        clone.write_bytecode(buffer, desired_version=0)
        return buffer.getvalue()


def deserialize(body: bytes) -> ir.Module:
    """A serialized kernel back as a module (tests compare kernels with JAX's this way)."""
    ctx = context()
    with ctx, ir.Location.unknown():
        previous = ctx.allow_unregistered_dialects
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(body)
            PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
                module.operation)
        finally:
            ctx.allow_unregistered_dialects = previous
        return module


def has_communication(module: ir.Module) -> bool:
    """Whether a kernel reaches other devices (remote DMAs, semaphores), as Mosaic finds."""
    return bool(tpu.private_has_communication(module.operation)[0])


def op_names(module: ir.Module) -> list:
    """The name of every operation in ``module`` (nested ones included), in order."""
    names = []

    def visit(op):
        names.append(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return names
