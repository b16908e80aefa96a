"""The one package that touches jaxlib's PJRT surface (private and version-fragile calls:
clients, transfers, compile options, execute, result handlers, readback, DLPack, the
profiler). A jaxlib upgrade should be a change to this folder alone. The rules learned the
hard way are in docs/architecture.md (runtime).

One module per concern:

- ``clients``: PJRT clients (CPU, the CUDA and TPU plugins), multi-process jobs, jaxlib's
  own modules (version, ``xla_client``, profiler);
- ``compiling``: compile options, compiling (one device or SPMD), shape refinement, what a
  compiled program reports about itself;
- ``execution``: running programs (the hot path's runners), transfers and readback,
  buffers, shardings, DLPack;
- ``callbacks``: host callbacks, jaxlib's custom-call libraries, user FFI targets;
- ``serialization``: executables for the persistent cache, exported StableHLO artifacts.

Every name is re-exported here, so ``from traxla.runtime import xla_adapter as xla`` keeps
working; a module that needs one concern imports that module. (A test that replaces a
function replaces it where it is called: in its concern module.)"""
# (clients first: it sets PJRT's log level before jaxlib's other modules load)
from traxla.runtime.xla_adapter.clients import (  # noqa: F401
    JAXLIB_VERSION, PluginError, _preload_nvidia_libraries, backend_started, cpu_client,
    cuda_client, device_memory_stats, devices, distributed_barrier, distributed_client,
    find_cuda_plugin, find_libtpu, heap_profile, ifrt_programs, initialize_distributed,
    live_processes, local_devices, memory_kinds, process_count, process_index, profile_data,
    profiler, shutdown_distributed, tpu_chips_present, tpu_client, xla_client)
from traxla.runtime.xla_adapter.execution import (  # noqa: F401
    RuntimeErrorType, block_until_ready, buffer_protocol_supports, buffer_to_dlpack, delete,
    deleted_buffers, device_put, device_put_sharded, dlpack_to_buffer, execute, gspmd_sharding,
    hlo_sharding, is_deleted, make_runner, make_synchronous_runner, per_device_buffers,
    replicated_sharding, result_handlers, result_handlers_per_output, runner_parts,
    single_device_sharding, tile_layout, to_numpy, to_numpy_any, tracebacks_enabled,
    unsafe_buffer_pointer)
from traxla.runtime.xla_adapter.callbacks import (  # noqa: F401
    _registered_libraries, host_callback_objects, jaxlib_include_dir,
    register_custom_call_as_batch_partitionable, register_custom_call_library,
    register_custom_call_target, register_custom_type, registered_custom_call_targets)
from traxla.runtime.xla_adapter.compiling import (  # noqa: F401
    compilable, compile, compile_options, compile_spmd, cost_analysis, hlo_computation,
    hlo_cost_analysis, hlo_text, layouts, memory_analysis, module_bytecode,
    optimized_hlo_text, output_hlo_shardings, refine_polymorphic_shapes, spmd_compile_options)
from traxla.runtime.xla_adapter.serialization import (  # noqa: F401
    compile_options_fingerprint, deserialize_executable, serialize_executable,
    serialize_portable_artifact, stablehlo_export_version)
