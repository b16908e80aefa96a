"""Every option of JAX 0.10.2's ``jax.config``, as data: its name, kind (which fixes JAX's
validation and error messages), default, choices, whether JAX makes it a ``State`` (a
``config.jax_*`` attribute and a context manager; ``config.read`` refuses it) or a
``Flag``, and what traxla does with it:

- ``traxla``: honoured (traxla has the behaviour; the option is one of ``Config``'s);
- ``inert``: accepted and without effect on what a program computes or raises in traxla
  (compiler effort, GPU/TPU/Pallas lowering choices, logging, caches, multi-host plumbing,
  jax2tf/export internals, JAX-internal implementation switches);
- ``unsupported``: a value other than the default would change results or errors, which
  traxla does not implement: setting one raises NotImplementedError naming the option.

``Config`` (ir/config.py) builds its defaults, validation, ``values``, ``read`` and
attributes from this table, so a JAX option is never silently unknown."""
from __future__ import annotations

import enum


class LegacyPrngKeyState(enum.StrEnum):
    """What ``jax_legacy_prng_key`` does when a raw ``uint32`` key reaches traxla.random."""
    ALLOW = 'allow'
    WARN = 'warn'
    ERROR = 'error'


class NumpyDtypePromotion(enum.StrEnum):
    """``jax_numpy_dtype_promotion``'s values, as JAX's enum."""
    STANDARD = 'standard'
    STRICT = 'strict'


class ExplicitX64Mode(enum.IntEnum):
    """``jax_explicit_x64_dtypes``'s values, as JAX's enum (also spelled 'warn', ...)."""
    WARN = enum.auto()
    ERROR = enum.auto()
    ALLOW = enum.auto()

    @classmethod
    def _missing_(cls, value):
        return {"warn": cls.WARN, "error": cls.ERROR, "allow": cls.ALLOW}.get(value)


class RuntimeTracebackMode(enum.StrEnum):
    """``jax_send_traceback_to_runtime``'s values, as JAX's enum."""
    OFF = 'off'
    ON = 'on'
    FULL = 'full'

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            return cls.__members__.get(value.upper())
        return None


ENUM_CLASSES = {c.__name__: c for c in (LegacyPrngKeyState, NumpyDtypePromotion,
                                        ExplicitX64Mode, RuntimeTracebackMode)}

# (name, kind, default, choices, is_state, effect); choices: the enum values, or the enum
# class's name. Kinds: bool, int, float, str (str only), optstr (None or str), enum,
# optenum (None or one of the values), enum_class, device (jax_default_device),
# pjrt_options (jax_pjrt_client_create_options: None, a str or a dict).
JAX_OPTIONS = (
    ('check_vma', 'bool', False, None, True, 'unsupported'),
    ('eager_constant_folding', 'bool', False, None, True, 'inert'),
    ('jax2tf_associative_scan_reductions', 'bool', False, None, True, 'traxla'),
    ('jax2tf_default_native_serialization', 'bool', True, None, True, 'inert'),
    ('jax_allow_f16_reductions', 'bool', True, None, True, 'traxla'),
    ('jax_array_garbage_collection_guard', 'optenum', None, ('allow', 'log', 'fatal'), True, 'unsupported'),
    ('jax_auto_pcast', 'bool', True, None, True, 'unsupported'),
    ('jax_backend_target', 'str', '', None, False, 'unsupported'),
    ('jax_bcoo_cusparse_lowering', 'bool', False, None, True, 'inert'),
    ('jax_captured_constants_report_frames', 'int', 0, None, True, 'inert'),
    ('jax_captured_constants_warn_bytes', 'int', 2000000000, None, True, 'inert'),
    ('jax_check_proxy_envs', 'bool', True, None, False, 'inert'),
    ('jax_check_static_indices', 'bool', False, None, True, 'unsupported'),
    ('jax_check_tracer_leaks', 'bool', False, None, True, 'traxla'),
    ('jax_compilation_cache_check_contents', 'bool', False, None, True, 'inert'),
    ('jax_compilation_cache_dir', 'optstr', None, None, True, 'traxla'),
    ('jax_compilation_cache_expect_pgle', 'bool', False, None, True, 'inert'),
    ('jax_compilation_cache_include_metadata_in_key', 'bool', False, None, True, 'inert'),
    ('jax_compilation_cache_max_size', 'int', -1, None, True, 'traxla'),
    ('jax_compiler_detailed_logging_min_ops', 'int', 10, None, False, 'inert'),
    ('jax_compiler_enable_remat_pass', 'bool', True, None, True, 'inert'),
    ('jax_cpu_collectives_implementation', 'optenum', 'gloo', ('gloo', 'mpi', 'megascale'), True, 'inert'),
    ('jax_cpu_enable_async_dispatch', 'bool', True, None, False, 'inert'),
    ('jax_cpu_get_global_topology_timeout_minutes', 'int', 5, None, True, 'inert'),
    ('jax_cpu_get_local_topology_timeout_minutes', 'int', 2, None, True, 'inert'),
    ('jax_cross_host_transfer_socket_address', 'str', '', None, False, 'inert'),
    ('jax_cross_host_transfer_timeout_seconds', 'int', None, None, False, 'inert'),
    ('jax_cross_host_transfer_transfer_size', 'int', None, None, False, 'inert'),
    ('jax_cross_host_transport_addresses', 'str', '', None, False, 'inert'),
    ('jax_cuda_visible_devices', 'str', 'all', None, False, 'traxla'),
    ('jax_custom_vjp3', 'bool', False, None, True, 'inert'),
    ('jax_debug_infs', 'bool', False, None, True, 'traxla'),
    ('jax_debug_key_reuse', 'bool', False, None, True, 'traxla'),
    ('jax_debug_leaked_clients_on_clear_backends', 'bool', False, None, True, 'inert'),
    ('jax_debug_log_modules', 'str', '', None, True, 'inert'),
    ('jax_debug_nans', 'bool', False, None, True, 'traxla'),
    ('jax_default_device', 'device', None, None, True, 'traxla'),
    ('jax_default_matmul_precision', 'optenum', None, ('default', 'high', 'highest', 'bfloat16', 'tensorfloat32', 'float32', 'ANY_F8_ANY_F8_F32', 'ANY_F8_ANY_F8_F32_FAST_ACCUM', 'ANY_F8_ANY_F8_ANY', 'ANY_F8_ANY_F8_ANY_FAST_ACCUM', 'F16_F16_F16', 'F16_F16_F32', 'BF16_BF16_BF16', 'BF16_BF16_F32', 'BF16_BF16_F32_X3', 'BF16_BF16_F32_X6', 'BF16_BF16_F32_X9', 'TF32_TF32_F32', 'TF32_TF32_F32_X3', 'F32_F32_F32', 'F64_F64_F64'), True, 'traxla'),
    ('jax_default_prng_impl', 'enum', 'threefry2x32', ('threefry2x32', 'threefry4x32', 'rbg', 'unsafe_rbg', 'philox2x32', 'philox4x32'), True, 'unsupported'),
    ('jax_disable_bwd_checks', 'bool', False, None, True, 'inert'),
    ('jax_disable_jit', 'bool', False, None, True, 'traxla'),
    ('jax_disable_most_optimizations', 'bool', False, None, False, 'inert'),
    ('jax_disable_vmap_shmap_error', 'bool', False, None, True, 'inert'),
    ('jax_disallow_mesh_context_manager', 'bool', False, None, True, 'unsupported'),
    ('jax_distributed_debug', 'bool', False, None, True, 'inert'),
    ('jax_dump_ir_modes', 'str', 'stablehlo', None, False, 'inert'),
    ('jax_dump_ir_to', 'str', '', None, False, 'unsupported'),
    ('jax_embedded_constants_max_bytes', 'int', 32, None, True, 'inert'),
    ('jax_enable_checks', 'bool', False, None, True, 'traxla'),
    ('jax_enable_compilation_cache', 'bool', True, None, True, 'traxla'),
    ('jax_enable_custom_prng', 'bool', False, None, True, 'traxla'),
    ('jax_enable_pgle', 'bool', False, None, True, 'inert'),
    ('jax_enable_preemption_service', 'bool', True, None, True, 'inert'),
    ('jax_enable_recoverability', 'bool', False, None, True, 'inert'),
    ('jax_enable_x64', 'bool', False, None, True, 'traxla'),
    ('jax_error_checking_behavior_divide', 'enum', 'ignore', ('ignore', 'raise'), True, 'unsupported'),
    ('jax_error_checking_behavior_nan', 'enum', 'ignore', ('ignore', 'raise'), True, 'unsupported'),
    ('jax_error_checking_behavior_oob', 'enum', 'ignore', ('ignore', 'raise'), True, 'unsupported'),
    ('jax_exec_time_optimization_effort', 'float', 0.0, None, True, 'inert'),
    ('jax_experimental_unsafe_xla_runtime_errors', 'bool', False, None, True, 'unsupported'),
    ('jax_explain_cache_misses', 'bool', False, None, True, 'traxla'),
    ('jax_explicit_x64_dtypes', 'enum_class', 1, 'ExplicitX64Mode', True, 'unsupported'),
    ('jax_export_calling_convention_version', 'int', 10, None, True, 'unsupported'),
    ('jax_export_ignore_forward_compatibility', 'bool', False, None, True, 'inert'),
    ('jax_force_dcn_cross_host_transfers', 'bool', False, None, False, 'inert'),
    ('jax_high_dynamic_range_gumbel', 'bool', False, None, True, 'unsupported'),
    ('jax_hlo_source_file_canonicalization_regex', 'optstr', None, None, True, 'inert'),
    ('jax_include_debug_info_in_dumps', 'bool', True, None, False, 'inert'),
    ('jax_include_full_tracebacks_in_locations', 'bool', True, None, True, 'inert'),
    ('jax_legacy_prng_key', 'enum_class', 'allow', 'LegacyPrngKeyState', True, 'traxla'),
    ('jax_log_checkpoint_residuals', 'bool', False, None, True, 'inert'),
    ('jax_log_compiles', 'bool', False, None, True, 'traxla'),
    ('jax_logging_level', 'optenum', 'NOTSET', ('NOTSET', 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'), True, 'inert'),
    ('jax_memory_fitting_effort', 'float', 0.0, None, True, 'inert'),
    ('jax_memory_fitting_level', 'enum', 'O2', ('UNKNOWN', 'O0', 'O1', 'O2', 'O3'), True, 'inert'),
    ('jax_mock_gpu_topology', 'str', '', None, False, 'unsupported'),
    ('jax_mosaic_allow_hlo', 'bool', False, None, True, 'inert'),
    ('jax_mutable_array_checks', 'bool', True, None, True, 'inert'),
    ('jax_no_execution', 'bool', False, None, True, 'traxla'),
    ('jax_no_tracing', 'bool', False, None, True, 'traxla'),
    ('jax_num_cpu_devices', 'int', -1, None, True, 'traxla'),
    ('jax_numpy_dtype_promotion', 'enum_class', 'standard', 'NumpyDtypePromotion', True, 'traxla'),
    ('jax_numpy_rank_promotion', 'enum', 'allow', ('allow', 'warn', 'raise'), True, 'traxla'),
    ('jax_oneapi_visible_devices', 'str', 'all', None, False, 'inert'),
    ('jax_optimization_level', 'enum', 'UNKNOWN', ('UNKNOWN', 'O0', 'O1', 'O2', 'O3'), True, 'inert'),
    ('jax_pallas_enable_debug_checks', 'bool', False, None, True, 'inert'),
    ('jax_pallas_poison_buffers', 'bool', False, None, True, 'inert'),
    ('jax_pallas_use_mosaic_gpu', 'bool', True, None, True, 'inert'),
    ('jax_pallas_verbose_errors', 'bool', False, None, False, 'inert'),
    ('jax_persistent_cache_enable_xla_caches', 'optstr', 'xla_gpu_per_fusion_autotune_cache_dir', None, True, 'inert'),
    ('jax_persistent_cache_min_compile_time_secs', 'float', 1.0, None, True, 'traxla'),
    ('jax_persistent_cache_min_entry_size_bytes', 'int', 0, None, True, 'traxla'),
    ('jax_pgle_aggregation_percentile', 'int', 90, None, True, 'inert'),
    ('jax_pgle_profiling_runs', 'int', 3, None, True, 'inert'),
    ('jax_pjrt_client_create_options', 'pjrt_options', None, None, True, 'unsupported'),
    ('jax_platform_name', 'str', '', None, False, 'traxla'),
    ('jax_platforms', 'optstr', None, None, True, 'traxla'),
    ('jax_pprint_use_color', 'bool', True, None, True, 'inert'),
    ('jax_ragged_dot_use_gpu_pallas_triton_lowering', 'bool', False, None, True, 'inert'),
    ('jax_ragged_dot_use_ragged_dot_instruction', 'bool', True, None, True, 'inert'),
    ('jax_raise_persistent_cache_errors', 'bool', False, None, True, 'inert'),
    ('jax_random_seed_offset', 'int', 0, None, True, 'traxla'),
    ('jax_refs_to_pins', 'bool', False, None, True, 'inert'),
    ('jax_remat3', 'bool', False, None, True, 'traxla'),
    ('jax_remove_custom_partitioning_ptr_from_cache_key', 'bool', False, None, True, 'inert'),
    ('jax_remove_size_one_mesh_axis_from_type', 'bool', False, None, True, 'unsupported'),
    ('jax_rocm_visible_devices', 'str', 'all', None, False, 'inert'),
    ('jax_scan3', 'bool', False, None, True, 'inert'),
    ('jax_send_traceback_to_runtime', 'enum_class', 'off', 'RuntimeTracebackMode', True, 'inert'),
    ('jax_serialization_version', 'int', 0, None, True, 'unsupported'),
    ('jax_share_binary_between_hosts', 'bool', False, None, True, 'inert'),
    ('jax_share_binary_between_hosts_timeout_ms', 'int', 1200000, None, True, 'inert'),
    ('jax_softmax_custom_jvp', 'bool', False, None, True, 'traxla'),
    ('jax_sort_devices_by_process_index', 'bool', True, None, False, 'inert'),
    ('jax_source_url_schema', 'optstr', None, None, True, 'inert'),
    ('jax_thread_guard', 'bool', False, None, True, 'unsupported'),
    ('jax_threefry_gpu_kernel_lowering', 'bool', False, None, True, 'inert'),
    ('jax_threefry_partitionable', 'bool', True, None, True, 'traxla'),
    ('jax_traceback_filtering', 'enum', 'auto', ('off', 'tracebackhide', 'remove_frames', 'quiet_remove_frames', 'auto'), True, 'traxla'),
    ('jax_traceback_in_locations_limit', 'int', 100, None, True, 'inert'),
    ('jax_tracer_error_num_traceback_frames', 'int', 5, None, False, 'inert'),
    ('jax_transfer_guard', 'optenum', None, ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit'), True, 'traxla'),
    ('jax_transfer_guard_device_to_device', 'optenum', None, ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit'), True, 'traxla'),
    ('jax_transfer_guard_device_to_host', 'optenum', None, ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit'), True, 'traxla'),
    ('jax_transfer_guard_host_to_device', 'optenum', None, ('allow', 'log', 'disallow', 'log_explicit', 'disallow_explicit'), True, 'traxla'),
    ('jax_use_direct_linearize', 'bool', True, None, True, 'inert'),
    ('jax_use_emit_pipeline_primitive', 'bool', False, None, True, 'inert'),
    ('jax_use_magma', 'enum', 'auto', ('off', 'on', 'auto'), True, 'inert'),
    ('jax_use_shardy_partitioner', 'bool', True, None, True, 'inert'),
    ('jax_use_simplified_jaxpr_constants', 'bool', False, None, True, 'inert'),
    ('jax_xla_backend', 'str', '', None, False, 'traxla'),
    ('jax_xla_profile_version', 'int', 0, None, True, 'inert'),
    ('mock_num_gpu_processes', 'int', 0, None, False, 'unsupported'),
)


def parser(name: str, kind: str, choices):
    """JAX's parser of a new value of option ``name`` (its checks and error messages):
    returns the value to store, or raises."""
    if kind == "bool":
        return bool
    if kind == "int":
        def parse_int(v):
            if v is not None and not isinstance(v, int):
                raise ValueError(f"new int config value must be None or of type int, got {v} "
                                 f"of type {type(v)}")
            return v
        return parse_int
    if kind == "float":
        def parse_float(v):
            if v is not None and not isinstance(v, (float, int)):
                raise ValueError(f"new float config value must be None or of type float, got "
                                 f"{v} of type {type(v)}")
            return v
        return parse_float
    if kind == "str":
        def parse_str(v):
            if not isinstance(v, str):
                raise TypeError(f"new string config value must be of type str, got {v} of "
                                f"type {type(v)}.")
            return v
        return parse_str
    if kind == "optstr":
        def parse_optstr(v):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"new string config value must be None or of type str, got "
                                 f"{v} of type {type(v)}.")
            return v
        return parse_optstr
    if kind == "enum":
        def parse_enum(v):
            if type(v) is not str or v not in choices:
                raise ValueError(f"new enum value must be in {list(choices)}, got {v} of type "
                                 f"{type(v)}.")
            return v
        return parse_enum
    if kind == "optenum":
        def parse_optenum(v):
            if v is not None and (type(v) is not str or v not in choices):
                raise ValueError(f"new enum value must be None or in {list(choices)}, got {v} "
                                 f"of type {type(v)}.")
            return v
        return parse_optenum
    if kind == "enum_class":
        cls = ENUM_CLASSES[choices]

        def parse_enum_class(v):
            if isinstance(v, str):
                return cls(v)
            if not isinstance(v, cls):
                raise TypeError(f"new enum value must be an instance of {cls}, got {v} of "
                                f"type {type(v)}.")
            return v
        return parse_enum_class
    if kind == "pjrt_options":
        def parse_options(v):
            if v is not None and not isinstance(v, (str, dict)):
                raise ValueError("new string config value must be None or of type dict | str, "
                                 f"got {v} of type {type(v)}.")
            return v
        return parse_options
    return None  # device: validated where devices are known (api/config_contexts.py)
