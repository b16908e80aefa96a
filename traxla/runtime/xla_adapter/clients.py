"""PJRT clients: the CPU client, the CUDA and TPU plugins (found by ``plugin_paths``, loaded
without importing jax), multi-process jobs (the distributed runtime), and jaxlib's own
modules traxla hands on (its version, ``xla_client``, the profiler, IFRT programs)."""
from __future__ import annotations

import functools
import importlib
import os
import threading

from jaxlib import _jax

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # silence PJRT's INFO lines

from jaxlib import xla_client as _xc  # noqa: E402
from jaxlib import _profile_data as _jaxlib_profile_data, _profiler as _jaxlib_profiler  # noqa: E402
from traxla.runtime.xla_adapter.plugin_paths import (  # noqa: E402
    PluginError, _preload_nvidia_libraries, find_cuda_plugin, find_libtpu, tpu_chips_present)

try:
    from jaxlib import utils as _utils
    _utils.absl_set_min_log_level(1)
except Exception:  # pragma: no cover - logging control is best effort
    pass

JAXLIB_VERSION = getattr(_xc, "__version__", None) or __import__("jaxlib").__version__
xla_client = _xc  # jaxlib's module itself, for ``jax._src.lib.xla_client`` (autodidax)


_lock = threading.Lock()
_clients: dict[str, object] = {}
_distributed: dict = {}


def initialize_distributed(coordinator: str, num_processes: int, process_id: int,
                           host: str = "127.0.0.1"):
    """Joins a multi-process job (process 0 also runs the coordination service); CPU
    collectives go over Gloo/TCP. Must precede the first use of the CPU backend."""
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


def live_processes(process_ids) -> dict:
    """Of ``process_ids``, the live ones, each with its incarnation id (the distributed
    runtime's answer: a barrier across the live processes)."""
    return _distributed["client"].get_live_nodes(list(process_ids))


def distributed_client():
    """The distributed runtime client of this process's multi-process job, or None."""
    return _distributed.get("client")


def process_count() -> int:
    return _distributed.get("num_processes", 1)


def _client(platform: str, start):
    """The process's client for ``platform``, made by ``start()`` on first use (once)."""
    client = _clients.get(platform)
    if client is None:
        with _lock:
            client = _clients.get(platform)
            if client is None:
                client = _clients[platform] = start()
    return client


def cpu_client(num_devices: int = 1):
    """The process's PJRT CPU client, created on first use."""
    def start():
        if not _distributed:
            return _xc.make_cpu_client(num_devices=num_devices)
        return _xc.make_cpu_client(
            distributed_client=_distributed["client"], node_id=_distributed["process_id"],
            num_nodes=_distributed["num_processes"], collectives=_distributed["collectives"],
            num_devices=num_devices)
    return _client("cpu", start)


def backend_started(platform: str = "cpu") -> bool:
    return platform in _clients


def devices(client):
    """Every device of the job (all processes), in id order."""
    return client.devices()


def local_devices(client):
    return client.local_devices()


def memory_kinds(device):
    return [m.kind for m in device.addressable_memories()]


# -- accelerators: the CUDA PJRT plugin (found by plugin_paths), loaded without importing jax --

_plugin_apis: dict = {}


def cuda_client(visible_devices=None):
    """The process's CUDA PJRT client (plugin loaded, its FFI targets registered), created on
    first use; PluginError with a one-line reason when it cannot start."""
    return _client("cuda", lambda: _start_cuda_client(visible_devices))


def _start_cuda_client(visible_devices):
    so, ext_module, _ = find_cuda_plugin()
    _preload_nvidia_libraries()
    first_load = "cuda" not in _plugin_apis
    try:
        if first_load:
            _plugin_apis["cuda"] = _xc.load_pjrt_plugin_dynamically("cuda", so)
        if not _xc.pjrt_plugin_initialized("cuda"):
            _xc.initialize_pjrt_plugin("cuda")
    except Exception as e:  # noqa: BLE001 - jaxlib raises its runtime error class
        raise PluginError(f"could not load the CUDA plugin {so}: {_first_line(e)}") from None
    c_api = _plugin_apis["cuda"]
    try:
        ext = importlib.import_module(f"{ext_module}.cuda_plugin_extension")
    except ImportError:
        ext = None  # no GPU callbacks or extension targets; plain programs still run
    if ext is not None and first_load:
        _xc.register_custom_type_handler("CUDA", functools.partial(ext.register_custom_type, c_api))
        _xc.register_custom_call_handler(
            "CUDA", functools.partial(ext.register_custom_call_target, c_api))
        for name, value in ext.ffi_types().items():
            _xc.register_custom_type(name, value, platform="CUDA")
        for name, value in ext.ffi_handlers().items():
            _xc.register_custom_call_target(name, value, platform="CUDA", api_version=1)
    options = _xc.generate_pjrt_gpu_plugin_options()
    if visible_devices is not None:
        options["visible_devices"] = list(visible_devices)
    try:
        client = _xc.make_c_api_client("cuda", options, None)
    except Exception as e:  # noqa: BLE001
        message = _first_line(e)
        if "No visible GPU" in message:
            raise PluginError("no visible GPU: the CUDA plugin is installed but found no GPU "
                              "(check nvidia-smi and CUDA_VISIBLE_DEVICES)") from None
        raise PluginError(f"the CUDA client did not start: {message}") from None
    return client


# -- TPU: libtpu's PJRT plugin, found as JAX finds it (plugin_paths) ---------------------------

def tpu_client():
    """The process's TPU PJRT client (libtpu loaded and initialized), created on first use;
    PluginError with JAX's reason when it cannot start."""
    return _client("tpu", _start_tpu_client)


def _start_tpu_client():
    so = find_libtpu()
    forced = "JAX_FORCE_TPU_INIT" in os.environ
    if so is None and not forced:
        raise PluginError("INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared "
                          "object file: No such file or directory (pip install libtpu)")
    if not forced and tpu_chips_present() == 0:
        raise PluginError("no TPU chip found on this machine (libtpu is installed at "
                          f"{so}; set JAX_FORCE_TPU_INIT=1 to try anyway)")
    os.environ.setdefault("TPU_ML_PLATFORM", "JAX")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        if not _xc.pjrt_plugin_loaded("tpu"):
            _plugin_apis["tpu"] = _xc.load_pjrt_plugin_dynamically("tpu", so or "libtpu.so")
        if not _xc.pjrt_plugin_initialized("tpu"):
            _xc.initialize_pjrt_plugin("tpu")
        return _xc.make_c_api_client("tpu", {}, None)
    except Exception as e:  # noqa: BLE001 - jaxlib raises its runtime error class
        raise PluginError(_first_line(e)) from None


def device_memory_stats(device):
    """The device allocator's statistics (bytes_in_use, bytes_limit, ...); None on CPU."""
    return device.memory_stats()


def _first_line(error) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


profiler, profile_data = _jaxlib_profiler, _jaxlib_profile_data


def heap_profile(client) -> bytes:
    return client.heap_profile()


def ifrt_programs():
    """jaxlib's IFRT program builders (``jax.extend.ifrt_programs.ifrt_programs``)."""
    return _jax.ifrt_programs
