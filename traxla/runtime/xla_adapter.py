"""The one module that touches jaxlib's PJRT surface (private and
version-fragile calls: clients, transfers, compile options, execute, result
handlers, readback). A jaxlib upgrade should be a change to this file alone.

Rules learned the hard way (see shared/reference/jaxlib-0.10.2-notes.md):
- results go through C++ ``array_result_handler``s; Python-callable handlers
  and ``disassemble_into_single_device_arrays`` make jaxlib import ``jax``;
- readback uses the buffer protocol, and bf16 (which it refuses) is bitcast to
  uint16 on device first, never ``_single_device_array_to_np_array_did_copy``;
- ``execute_sharded`` checks only byte sizes, so callers check avals first;
- ``batched_device_put`` takes its dtype from the host value: convert first.
"""
from __future__ import annotations

import os
import threading

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # silence PJRT's INFO lines

from jaxlib import xla_client as _xc  # noqa: E402

try:
    from jaxlib import utils as _utils
    _utils.absl_set_min_log_level(1)
except Exception:  # pragma: no cover - logging control is best effort
    pass

JAXLIB_VERSION = getattr(_xc, "__version__", None) or __import__("jaxlib").__version__
RuntimeErrorType = _xc.XlaRuntimeError

_lock = threading.Lock()
_clients: dict[str, object] = {}


_distributed: dict = {}


def initialize_distributed(coordinator: str, num_processes: int, process_id: int,
                           host: str = "127.0.0.1"):
    """Joins a multi-process job (process 0 also runs the coordination service); CPU
    collectives go over Gloo/TCP. Must precede the first use of the CPU backend."""
    from jaxlib import _jax
    if process_id == 0:
        _distributed["service"] = _jax.get_distributed_runtime_service(
            coordinator, num_processes, heartbeat_timeout=30, shutdown_timeout=10)
    client = _jax.get_distributed_runtime_client(
        coordinator, process_id, init_timeout=60, heartbeat_timeout=30,
        shutdown_on_destruction=True, use_compression=True)
    client.connect()
    _distributed.update(client=client, num_processes=num_processes, process_id=process_id,
                        collectives=_jax.make_gloo_tcp_collectives(distributed_client=client,
                                                                   hostname=host))


def distributed_barrier(name: str, timeout_ms: int = 60000):
    _distributed["client"].wait_at_barrier(name, timeout_ms)


def shutdown_distributed():
    client = _distributed.pop("client", None)
    if client is not None:
        client.shutdown()
    _distributed.clear()


def process_index() -> int:
    return _distributed.get("process_id", 0)


def process_count() -> int:
    return _distributed.get("num_processes", 1)


def cpu_client(num_devices: int = 1):
    """The process's PJRT CPU client, created on first use."""
    client = _clients.get("cpu")
    if client is None:
        with _lock:
            client = _clients.get("cpu")
            if client is None:
                if _distributed:
                    client = _xc.make_cpu_client(
                        distributed_client=_distributed["client"],
                        node_id=_distributed["process_id"],
                        num_nodes=_distributed["num_processes"],
                        collectives=_distributed["collectives"], num_devices=num_devices)
                else:
                    client = _xc.make_cpu_client(num_devices=num_devices)
                _clients["cpu"] = client
    return client


def backend_started(platform: str = "cpu") -> bool:
    return platform in _clients


def devices(client):
    """Every device of the job (all processes), in id order."""
    return client.devices()


def local_devices(client):
    return client.local_devices()


def single_device_sharding(device):
    return _xc.GSPMDSharding(_xc.DeviceList((device,)), _xc.HloSharding.replicate())


def device_put(host: np.ndarray, aval, device, sharding):
    """Copies a host array (already in the aval's dtype) to ``device``."""
    return _xc.batched_device_put(aval, sharding, [host], [device], True, False,
                                  _xc.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL,
                                  enable_x64=True)


def to_numpy(buffer) -> np.ndarray:
    """Reads a CPU buffer back (zero-copy, read-only view)."""
    return np.asarray(memoryview(buffer))


def buffer_protocol_supports(dtype) -> bool:
    return dtype.name != "bfloat16"


def compile_options(num_partitions: int = 1):
    opts = _xc.CompileOptions()
    opts.executable_build_options.use_spmd_partitioning = True
    if num_partitions > 1:
        opts.num_partitions = num_partitions
    return opts


def compile(client, module, devices_):
    """Compiles an ``ir.Module`` (or its text/bytecode) into a loaded executable."""
    return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), compile_options())


def result_handlers(out_avals, sharding):
    return [_xc.array_result_handler(aval, sharding, True, _skip_checks=True) for aval in out_avals]


def result_handlers_per_output(out_avals, shardings):
    return [_xc.array_result_handler(aval, s, True, _skip_checks=True)
            for aval, s in zip(out_avals, shardings)]


def execute(executable, buffers, handlers):
    return executable.execute_sharded(buffers).consume_with_handlers(handlers)


def make_runner(executable, handlers):
    """``run(buffers) -> output buffers``: the hot path, with attribute lookups hoisted."""
    execute_sharded = executable.execute_sharded

    def run(buffers):
        return execute_sharded(buffers).consume_with_handlers(handlers)
    return run


def optimized_hlo_text(executable) -> str:
    return executable.hlo_modules()[0].to_string()


def cost_analysis(executable) -> dict:
    return dict(executable.cost_analysis())


def memory_analysis(executable):
    return executable.get_compiled_memory_stats()


def block_until_ready(buffer):
    buffer.block_until_ready()


def is_deleted(buffer) -> bool:
    return buffer.is_deleted()


def delete(buffer):
    buffer.delete()


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


def per_device_buffers(buffer):
    """``[(device id, single-device buffer)]`` of a multi-device array. jaxlib's C++
    tries ``import jax.core`` here; when jax is not imported yet, that import is made
    to fail fast for the duration of the call, so traxla never imports jax."""
    import sys
    blocked = []
    if "jax" not in sys.modules:
        for name in ("jax.core", "jax._src.sharding_impls"):
            if name not in sys.modules:
                sys.modules[name] = None
                blocked.append(name)
    try:
        arrays = buffer._arrays
    finally:
        for name in blocked:
            sys.modules.pop(name, None)
    return [(_device_of(a).id, a) for a in arrays]


def _device_of(single_device_array):
    sharding = single_device_array._sharding
    device = getattr(sharding, "_device", None)
    return device if device is not None else sharding._internal_device_list[0]


def compile_spmd(client, module, devices_, num_partitions):
    opts = _xc.CompileOptions()
    opts.num_replicas = 1
    opts.num_partitions = num_partitions
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    ids = np.asarray([d.id for d in devices_], np.int32).reshape(1, num_partitions)
    opts.device_assignment = _xc.DeviceAssignment.create(ids)
    return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), opts)


def output_hlo_shardings(executable):
    shardings = executable.get_output_shardings()
    if shardings is None:
        return None
    return [_xc.HloSharding.from_proto(s) for s in shardings]


def memory_kinds(device):
    return [m.kind for m in device.addressable_memories()]


def tile_layout(hlo, ndim):
    """``(tile dims for the array's ndim, device index per tile position, row-major)``,
    or None when replicated. Trailing subgroup (replicated) tile dims are folded away:
    each listed device index owns the tile at its position."""
    if hlo.is_replicated():
        return None
    dims = list(hlo.tile_assignment_dimensions())
    devs = list(hlo.tile_assignment_devices())
    return dims[:ndim], dims[ndim:], devs
