"""The one module that touches jaxlib's PJRT surface (private and version-fragile calls:
clients, transfers, compile options, execute, result handlers, readback, DLPack, the
profiler). A jaxlib upgrade should be a change to this file alone. The rules learned the
hard way are in docs/architecture.md (runtime)."""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import re
import sys
import threading

import numpy as np
from jaxlib import _jax, _hlo, lapack as _lapack_module
import importlib
import functools
import jaxlib
from jaxlib.mlir.dialects import stablehlo as hlo
from jaxlib.mlir import ir

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # silence PJRT's INFO lines

from jaxlib import xla_client as _xc  # noqa: E402
from jaxlib import _profile_data as _jaxlib_profile_data, _profiler as _jaxlib_profiler  # noqa: E402
from traxla.runtime.plugin_paths import (  # noqa: E402,F401  (re-exported)
    PluginError, _preload_nvidia_libraries, find_cuda_plugin, find_libtpu, tpu_chips_present)

try:
    from jaxlib import utils as _utils
    _utils.absl_set_min_log_level(1)
except Exception:  # pragma: no cover - logging control is best effort
    pass

JAXLIB_VERSION = getattr(_xc, "__version__", None) or __import__("jaxlib").__version__
xla_client = _xc  # jaxlib's module itself, for ``jax._src.lib.xla_client`` (autodidax)

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


# As ``jax._src.compiler.get_compile_options`` at JAX's defaults (the same options make XLA
# do the same work: an unset memory-fitting level, or profile version 0, "look an AutoFDO
# profile up", cost TPU compiles time): memory fitting O2 (xla::EffortLevel 29), no profile.
def _jax_defaults(opts):
    opts.executable_build_options.memory_fitting_level = 29
    opts.profile_version = -1


def compile_options(num_partitions: int = 1, device=None, arity=(1, 1)):
    """Options of a program; ``device``: the one device it runs on (its device assignment,
    sharding propagation allowed to each of its ``arity`` (parameters, results), as JAX's
    ``jit`` without shardings)."""
    opts = _xc.CompileOptions()
    build = opts.executable_build_options
    build.use_spmd_partitioning = build.use_shardy_partitioner = True
    opts.num_replicas, opts.num_partitions = 1, num_partitions
    _jax_defaults(opts)
    if device is not None and num_partitions == 1:
        opts.device_assignment = _xc.DeviceAssignment.create(np.asarray([[device.id]], np.int32))
        build.allow_spmd_sharding_propagation_to_parameters = [True] * max(arity[0], 1)
        build.allow_spmd_sharding_propagation_to_output = [True] * max(arity[1], 1)
    return opts


def _main_arity(module) -> tuple:
    """(parameters, results) of an ``ir.Module``'s ``main``; (1, 1) for text or bytecode
    (one entry stands for all in XLA)."""
    if isinstance(module, (bytes, str)):
        return 1, 1
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value == "main":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            return len(ftype.inputs), len(ftype.results)
    return 1, 1


def _under_ops(op, n) -> int:
    """``n`` less the operations in ``op``, stopping below 0 (JAX compiles a module of fewer
    than 10 without XLA's detailed logging: ``jax_compiler_detailed_logging_min_ops``)."""
    n -= 1
    for region in op.regions:
        for block in region:
            for child in block:
                n = _under_ops(child, n)
                if n < 0:
                    return n
    return n


def compile(client, module, devices_, host_callbacks=(), compiler_options=None,
            owned: bool = True):
    """Compiles an ``ir.Module`` (or its text/bytecode) into a loaded executable.

    ``host_callbacks``: the Python callables the module's ``xla_ffi_python_cpu_callback``
    custom calls index. A module with such calls compiled without them crashes the process,
    so they are always passed when there are any. ``compiler_options`` are XLA's debug
    options by name (``{'xla_cpu_enable_fast_math': True}``), checked by XLA (an unknown
    name raises ``INVALID_ARGUMENT``). ``owned``: see ``compilable``."""
    opts = compile_options(device=devices_[0] if len(devices_) == 1 else None,
                           arity=_main_arity(module) if len(devices_) == 1 else (1, 1))
    _apply_compiler_options(opts, compiler_options)
    if not isinstance(module, (bytes, str)) and _under_ops(module.operation, 10) >= 0:
        opts.executable_build_options.debug_options.xla_detailed_logging = False
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}
    module = compilable(refine_polymorphic_shapes(module), owned)
    try:
        return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), opts, **kwargs)
    except _xc.XlaRuntimeError as e:
        raise _explain_compile_error(e) from None


def host_callback_objects(client, host_callbacks) -> list:
    """What ``compile_and_load`` takes for a module's host callbacks: the Python callables of
    the CPU/GPU FFI callback target as they are; a TPU send/recv callback (the lowering's
    ``SendRecvCallback``: channels and the shapes crossing them) as the client's callback
    object over those channels, as JAX's ``_emit_tpu_python_callback`` makes it."""
    out = []
    for cb in host_callbacks:
        if hasattr(cb, "send_channels"):
            shape = lambda a: _xc.Shape.array_shape(np.dtype(a.dtype), tuple(a.shape))  # noqa: E731
            cb = client.make_python_callback_from_host_send_and_recv(
                cb, [shape(a) for a in cb.operand_avals], [shape(a) for a in cb.result_avals],
                list(cb.send_channels), list(cb.recv_channels), pickle.dumps)
        out.append(cb)
    return out


def compilable(module, owned: bool):
    """What XLA compiles for ``module``. XLA compiles an ``ir.Module`` inside the module's
    MLIR context with the GIL released, so it gets the module itself only when ``owned``
    (the context is the calling thread's, which no other thread builds in, and this thread
    waits for the compile); otherwise its bytecode, which XLA parses into a context of its
    own (writing it holds the GIL: no other thread is inside MLIR meanwhile)."""
    if owned or isinstance(module, (bytes, str)):
        return module
    return module_bytecode(module)


def module_bytecode(module) -> bytes:
    buf = io.BytesIO()
    module.operation.write_bytecode(file=buf)
    return buf.getvalue()


def _apply_compiler_options(opts, compiler_options):
    if compiler_options:
        opts.env_option_overrides = [(str(k), _option_value(v))
                                     for k, v in compiler_options.items()]


def _option_value(v):
    # XLA parses every override from a string or takes a bool/int/float as it is.
    return v if isinstance(v, (str, bool, int, float)) else str(v)


def hlo_computation(module):
    """The HLO (an ``XlaComputation``) of a StableHLO module, as ``Lowered.compiler_ir('hlo')``
    (from bytecode: its locations name the HLO instructions x.1, sin.1, as JAX's)."""
    return _jax.mlir.mlir_module_to_xla_computation(
        module_bytecode(module) if isinstance(module, ir.Module) else module,
        use_tuple_args=False, return_tuple=False)


def hlo_text(computation, debug_info: bool = False) -> str:
    options = _hlo.HloPrintOptions.short_parsable()
    options.print_metadata = debug_info
    return computation.as_hlo_module().to_string(options)


def deleted_buffers(buffers) -> list[int]:
    """Positions of the buffers in ``buffers`` that were deleted or donated."""
    return [i for i, b in enumerate(buffers) if b.is_deleted()]


_UNREGISTERED_FFI = re.compile(r"No FFI handler registered for (\S+) on a platform (\S+)")


def _explain_compile_error(error):
    """XLA's error, with what to do when it is a call to an unregistered FFI target."""
    m = _UNREGISTERED_FFI.search(str(error))
    if m is None:
        return error
    return type(error)(
        f"{error}\nThe program calls the FFI target `{m.group(1)}`, which is not registered "
        f"on this platform ({m.group(2)}): register its handler first with "
        f"traxla.ffi.register_ffi_target({m.group(1)!r}, traxla.ffi.pycapsule(lib.Handler), "
        "platform='cpu'), then call the jitted function again.")


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


def optimized_hlo_text(executable) -> str:
    return executable.hlo_modules()[0].to_string()


def cost_analysis(executable) -> dict:
    return dict(executable.cost_analysis())


def memory_analysis(executable):
    return executable.get_compiled_memory_stats()


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


def spmd_compile_options(devices_, num_partitions, compiler_options=None):
    """An SPMD program's compile options: Shardy partitioning over ``devices_`` in order
    (the device assignment is part of the executable)."""
    opts = _xc.CompileOptions()
    _apply_compiler_options(opts, compiler_options)
    opts.num_replicas = 1
    opts.num_partitions = num_partitions
    _jax_defaults(opts)
    build = opts.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    ids = np.asarray([d.id for d in devices_], np.int32).reshape(1, num_partitions)
    opts.device_assignment = _xc.DeviceAssignment.create(ids)
    return opts


def compile_spmd(client, module, devices_, num_partitions, host_callbacks=(),
                 compiler_options=None, owned: bool = True):
    opts = spmd_compile_options(devices_, num_partitions, compiler_options)
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}  # see compile
    module = compilable(refine_polymorphic_shapes(module, enable_shardy=True), owned)
    try:
        return client.compile_and_load(module, _xc.DeviceList(tuple(devices_)), opts, **kwargs)
    except _xc.XlaRuntimeError as e:
        raise _explain_compile_error(e) from None


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


def layouts(executable, outputs=False):  # jaxlib's xla Layout of each parameter (output)
    got = executable.get_output_layouts() if outputs else executable.get_parameter_layouts()
    return [p._xla_layout() for p in got]


def device_memory_stats(device):
    """The device allocator's statistics (bytes_in_use, bytes_limit, ...); None on CPU."""
    return device.memory_stats()


def _first_line(error) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


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


# -- custom-call libraries shipped by jaxlib (registered once, on first use) ----------------------

_registered_libraries: set = set()


def register_custom_call_library(name: str):
    """Registers a jaxlib kernel library's typed-FFI targets with the CPU platform, once per
    process. ``lapack``: ``jaxlib.lapack``'s ``lapack_{s,d,c,z}*_ffi`` targets; its
    ``initialize()`` imports ``scipy.linalg.cython_lapack`` for the LAPACK symbols (about
    0.2 s), so it runs only when a program calls one of them."""
    if name in _registered_libraries:
        return
    with _lock:
        if name in _registered_libraries:
            return
        if name != "lapack":
            raise ValueError(f"traxla does not know the custom-call library {name!r}")
        _lapack_module._lapack.initialize()
        for target, capsule, api_version in _lapack_module.registrations()["cpu"]:
            _xc.register_custom_call_target(target, capsule, platform="cpu",
                                            api_version=api_version)
        _registered_libraries.add(name)


# -- user FFI targets (traxla.ffi) -----------------------------------------------------------

def register_custom_call_target(name: str, fn, platform: str = "cpu", api_version: int = 1,
                                **kwargs):
    """Registers a native handler (a PyCapsule, or a dict of stage capsules) with XLA."""
    return _xc.register_custom_call_target(name, fn, platform, api_version, **kwargs)


def register_custom_type(name: str, type_registration, platform: str = "cpu"):
    return _xc.register_custom_type(name, type_registration, platform=platform)


def register_custom_call_as_batch_partitionable(name: str):
    _xc.register_custom_call_as_batch_partitionable(name)


def registered_custom_call_targets(platform: str = "cpu") -> set:
    try:
        return set(_xc.custom_call_targets(platform))
    except Exception:  # noqa: BLE001  (an unknown platform has none)
        return set()


def jaxlib_include_dir() -> str:
    """The C++ headers jaxlib ships (``xla/ffi/api/ffi.h`` and friends)."""
    root = jaxlib.__file__ and os.path.dirname(os.path.abspath(jaxlib.__file__))
    if not root:
        paths = list(getattr(jaxlib, "__path__", []))
        if not paths:
            raise RuntimeError("Cannot determine jaxlib directory: neither __file__ nor "
                               "__path__ is available")
        root = paths[0]
    return os.path.join(root, "include")


# -- persistent compilation cache (runtime/compilation_cache.py) --------------------------------

def serialize_executable(loaded) -> bytes:
    return loaded.serialize()


def deserialize_executable(client, blob: bytes, devices_, host_callbacks=(),
                           compiler_options=None, options=None):
    """A loaded executable from ``serialize_executable``'s bytes; programs with host
    callbacks get the current process's callables (never none: that crashes). ``options``:
    the compile options it was compiled with when not the single-device ones (SPMD)."""
    opts = options
    if opts is None:
        opts = compile_options(device=devices_[0] if len(devices_) == 1 else None)
        _apply_compiler_options(opts, compiler_options)
    kwargs = {"host_callbacks": host_callback_objects(client, host_callbacks)} if host_callbacks else {}
    return client.deserialize_executable(blob, _xc.DeviceList(tuple(devices_)), opts, **kwargs)


def compile_options_fingerprint(num_partitions: int = 1, compiler_options=None) -> bytes:
    opts = compile_options(num_partitions)
    _apply_compiler_options(opts, compiler_options)
    return opts.SerializeAsString()


# -- exported artifacts (traxla/export): StableHLO portable artifacts, shape refinement -----

def stablehlo_export_version() -> str:
    """The StableHLO version exports target: one at least 4 weeks old, as JAX picks, so
    that consumers updated monthly can read them."""
    return hlo.get_version_from_compatibility_requirement(
        hlo.StablehloCompatibilityRequirement.WEEK_4)


def serialize_portable_artifact(module) -> bytes:
    """A module as the versioned (VHLO) bytecode ``Exported.mlir_module_serialized`` holds
    (does not change ``module``)."""
    return _jax.mlir.serialize_portable_artifact(module, stablehlo_export_version(), False)


def _uses_shape_polymorphism(module) -> bool:
    try:
        attrs = module.operation.attributes
    except AttributeError:  # text or bytecode
        return False
    if "jax.uses_shape_polymorphism" not in attrs:
        return False
    return ir.BoolAttr(attrs["jax.uses_shape_polymorphism"]).value


def refine_polymorphic_shapes(module, enable_shardy: bool = False):
    """A module that calls shape-polymorphic code with static arguments, with every
    dynamic shape resolved (and shape assertions checked) as bytecode XLA compiles; other
    modules unchanged."""
    if not _uses_shape_polymorphism(module):
        return module
    try:
        return _jax.mlir.refine_polymorphic_shapes(module_bytecode(module),
                                                   enable_shape_assertions=True,
                                                   validate_static_shapes=True,
                                                   enable_shardy=enable_shardy)
    except Exception as e:
        raise ValueError(f"Error refining the shapes of a shape-polymorphic exported call: "
                         f"{e}") from None


# -- DLPack (jax.dlpack) and the profiler (traxla.profiler: jaxlib's modules, heap profiles) ----

def buffer_to_dlpack(buf, stream=None):
    return _xc._xla.buffer_to_dlpack_managed_tensor(buf, stream=stream)


def dlpack_to_buffer(capsule, client, local_id, copy, kind: int):
    """(device, buffer) from a producer's capsule; jaxlib's C++ would import jax.core."""
    device = client.device_from_local_hardware_id(local_id)
    with _jax_imports_blocked():
        return device, _xc._xla.dlpack_managed_tensor_to_buffer(capsule, device, None, copy, kind)


profiler, profile_data = _jaxlib_profiler, _jaxlib_profile_data


def heap_profile(client) -> bytes:
    return client.heap_profile()


def ifrt_programs():
    """jaxlib's IFRT program builders (``jax.extend.ifrt_programs.ifrt_programs``)."""
    return _jax.ifrt_programs


def hlo_cost_analysis(client, computation) -> dict:
    """XLA's cost estimate of an HLO module as written (no optimization passes), as JAX's
    ``Lowered.cost_analysis``."""
    return dict(_jax.hlo_module_cost_analysis(client, computation.as_hlo_module()))
