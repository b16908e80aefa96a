"""Running programs and moving data: host-to-device transfers and readback, result
handlers and the runners of the hot path, buffers, shardings and sharded transfers, DLPack."""
from __future__ import annotations

import contextlib
import sys

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as _xc

# jaxlib's tracebacks keep a never-freed record per ``execute_sharded`` call (72 bytes): off
# for the whole process (a per-call switch fails: jaxlib refuses what was made while off once
# they are on again). JAX's source locations need them: tests switch them on for JAX only.
try:
    from jaxlib import _jax as _jaxlib_ext
    _tracebacks_enabled = _jaxlib_ext.tracebacks_enabled
    _set_tracebacks = _jaxlib_ext.set_tracebacks_enabled
    _set_tracebacks(False)
except Exception:  # pragma: no cover - a jaxlib without the switch
    _tracebacks_enabled = lambda: False  # noqa: E731
    _set_tracebacks = None
RuntimeErrorType = _xc.XlaRuntimeError


def single_device_sharding(device):
    return _xc.GSPMDSharding(_xc.DeviceList((device,)), _xc.HloSharding.replicate())


def device_put(host: np.ndarray, aval, device, sharding):
    """Copies a host array (already in the aval's dtype) to ``device``."""
    return _xc.batched_device_put(aval, sharding, [host], [device], True, False,
                                  _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
                                  enable_x64=True)


def to_numpy(buffer) -> np.ndarray:
    """Reads a buffer back: a CPU buffer as a zero-copy, read-only view; others (the buffer
    protocol is CPU-only) through jaxlib's copy-out path."""
    try:
        return np.asarray(memoryview(buffer))
    except BufferError:
        return to_numpy_any(buffer)


def buffer_protocol_supports(dtype) -> bool:
    return dtype.name != "bfloat16"


def deleted_buffers(buffers) -> list[int]:
    """Positions of the buffers in ``buffers`` that were deleted or donated."""
    return [i for i, b in enumerate(buffers) if b.is_deleted()]


def result_handlers(out_avals, sharding):
    return [_xc.array_result_handler(aval, sharding, True, _skip_checks=True) for aval in out_avals]


def result_handlers_per_output(out_avals, shardings):
    return [_xc.array_result_handler(aval, s, True, _skip_checks=True)
            for aval, s in zip(out_avals, shardings)]


def execute(executable, buffers, handlers):
    return executable.execute_sharded(buffers).consume_with_handlers(handlers)


def make_runner(executable, handlers, quiet_tracebacks=False):
    """``run(buffers) -> output buffers``: the hot path, with attribute lookups hoisted.
    ``quiet_tracebacks``: without jaxlib's per-call traceback record (single-device outputs
    only: a multi-device output needs it to be split into its shards)."""
    execute_sharded = executable.execute_sharded
    if not quiet_tracebacks or _set_tracebacks is None:
        def run(buffers):
            return execute_sharded(buffers).consume_with_handlers(handlers)
        return run

    def run(buffers):
        if _tracebacks_enabled():
            _set_tracebacks(False)
            try:
                return execute_sharded(buffers).consume_with_handlers(handlers)
            finally:
                _set_tracebacks(True)
        return execute_sharded(buffers).consume_with_handlers(handlers)
    return run


_consume = getattr(getattr(_jax, "ExecuteResults", None), "consume_with_handlers", None)
tracebacks_enabled = _tracebacks_enabled


def runner_parts(executable):
    """``(start, finish)``, with ``finish(start(buffers), handlers)`` doing what
    ``make_runner``'s ``run(buffers)`` does, as two C calls (no Python frame: the hit paths
    inline them), while ``tracebacks_enabled()`` is false; None when this jaxlib lacks them."""
    return None if _consume is None else (executable.execute_sharded, _consume)


def make_synchronous_runner(executable, handlers, translate_error, quiet_tracebacks=False):
    """A runner for programs that call back to Python: it waits for the program to finish
    (so that its effects have happened, in order, when the call returns) and turns a failure
    into ``translate_error(runtime_error)``'s exception."""
    execute_sharded = executable.execute_sharded

    def run(buffers):
        restore = quiet_tracebacks and _tracebacks_enabled()
        if restore:
            _set_tracebacks(False)
        try:
            results = execute_sharded(buffers, with_tokens=True)
            done = results.consume_token()
            outs = results.consume_with_handlers(handlers)
            done.block_until_ready()
            for out in outs:
                out.block_until_ready()
        except _xc.XlaRuntimeError as e:
            raise translate_error(e)  # noqa: B904  (the callback's own exception is its cause)
        finally:
            if restore:
                _set_tracebacks(True)
        return outs
    return run


# ``block_until_ready(buffer)``: jaxlib's method itself, so that waiting on a result costs
# no Python frame of its own.
block_until_ready = _xc.ArrayImpl.block_until_ready


def is_deleted(buffer) -> bool:
    return buffer.is_deleted()


def delete(buffer):
    buffer.delete()


def unsafe_buffer_pointer(buffer) -> int:
    return buffer.unsafe_buffer_pointer()


# -- several devices: shardings, sharded transfers, SPMD compilation ------------------------

def hlo_sharding(mesh_sizes, mesh_axis_names, spec, ndim):
    """The HloSharding of ``spec`` (one entry per dim: None, an axis name or a tuple of
    names) over a mesh; unused mesh axes replicate."""
    used, tile = [], []
    spec = tuple(spec) + (None,) * (ndim - len(spec))
    for p in spec:
        names = () if p is None else (p if isinstance(p, tuple) else (p,))
        size = 1
        for n in names:
            used.append(mesh_axis_names.index(n))
            size *= mesh_sizes[mesh_axis_names.index(n)]
        tile.append(size)
    if not used:
        return _xc.HloSharding.replicate()
    unused = [i for i in range(len(mesh_sizes)) if i not in used]
    perm = used + unused
    if unused:
        rep = 1
        for i in unused:
            rep *= mesh_sizes[i]
        return _xc.HloSharding.iota_tile(tile + [rep], list(mesh_sizes), perm,
                                         [_xc.OpSharding.Type.REPLICATED])
    return _xc.HloSharding.iota_tile(tile, list(mesh_sizes), perm)


def replicated_sharding():
    return _xc.HloSharding.replicate()


def gspmd_sharding(devices_, hlo, memory_kind=None):
    return _xc.GSPMDSharding(_xc.DeviceList(tuple(devices_)), hlo, memory_kind=memory_kind)


def device_put_sharded(global_aval, sharding, shards, devices_):
    """Assembles one array from per-device host shards, in the sharding's device order."""
    return _xc.batched_device_put(global_aval, sharding, shards, list(devices_), True, False,
                                  _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
                                  enable_x64=True)


@contextlib.contextmanager
def _jax_imports_blocked():
    """Makes jaxlib's ``import jax.core`` (and ``jax._src.sharding_impls``) fail fast inside
    the block while jax is not imported, so that traxla never imports jax."""
    blocked = [] if "jax" in sys.modules else [
        name for name in ("jax.core", "jax._src.sharding_impls") if name not in sys.modules]
    sys.modules.update(dict.fromkeys(blocked))
    try:
        yield
    finally:
        for name in blocked:
            sys.modules.pop(name, None)


def per_device_buffers(buffer):
    """``[(device id, single-device buffer)]`` of a multi-device array. jaxlib's C++
    tries ``import jax.core`` here; when jax is not imported yet, that import is made
    to fail fast for the duration of the call, so traxla never imports jax."""
    with _jax_imports_blocked():
        arrays = buffer._arrays
    return [(_device_of(a).id, a) for a in arrays]


def _device_of(single_device_array):
    sharding = single_device_array._sharding
    device = getattr(sharding, "_device", None)
    return device if device is not None else sharding._internal_device_list[0]


def tile_layout(hlo, ndim):
    """``(tile dims for the array's ndim, device index per tile position, row-major)``,
    or None when replicated. Trailing subgroup (replicated) tile dims are folded away:
    each listed device index owns the tile at its position."""
    if hlo.is_replicated():
        return None
    dims = list(hlo.tile_assignment_dimensions())
    devs = list(hlo.tile_assignment_devices())
    return dims[:ndim], dims[ndim:], devs


def to_numpy_any(buffer) -> np.ndarray:
    """Reads a single-device buffer on any platform (the buffer protocol is CPU-only):
    through jaxlib's copy-out path, with its ``import jax.core`` made to fail fast when jax
    is not imported (``_jax_imports_blocked``)."""
    # Arrays made by a quiet runner carry no traceback context, which jaxlib's copy-out
    # insists on while tracebacks are on: read them with tracebacks off too.
    restore = _set_tracebacks is not None and _tracebacks_enabled()
    if restore:
        _set_tracebacks(False)
    try:
        with _jax_imports_blocked():
            return buffer._single_device_array_to_np_array_did_copy()[0]
    finally:
        if restore:
            _set_tracebacks(True)


def buffer_to_dlpack(buf, stream=None):
    return _xc._xla.buffer_to_dlpack_managed_tensor(buf, stream=stream)


def dlpack_to_buffer(capsule, client, local_id, copy, kind: int):
    """(device, buffer) from a producer's capsule; jaxlib's C++ would import jax.core."""
    device = client.device_from_local_hardware_id(local_id)
    with _jax_imports_blocked():
        return device, _xc._xla.dlpack_managed_tensor_to_buffer(capsule, device, None, copy, kind)
