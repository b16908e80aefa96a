"""traxla: a JAX-compatible front-end compiler for Python numerical code.

Trace a pure function into a jaxpr, lower it to StableHLO, compile and run it
through XLA's PJRT runtime (jaxlib), without importing ``jax``.
"""
from traxla.ir.config import config
from traxla import errors, tree_util
from traxla import numpy  # noqa: F401  (installs array operators)
from traxla import lax
# The transformations' rules are written against lax and numpy: they register now.
from traxla.autodiff import rules as _autodiff_rules  # noqa: F401
from traxla.batching import rules as _batching_rules  # noqa: F401
from traxla.batching import vmap
from traxla.autodiff import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jvp, linearize,
                       value_and_grad, vjp)
from traxla.api import (Compiled, JitFunction, Lowered, Traced, block_until_ready, device_put, jit,
                  make_jaxpr, typeof)
from traxla.runtime import Array, Device, devices
from traxla import sharding
from traxla.sharding import NamedSharding, make_mesh
from traxla.sharding.shard_map import shard_map, smap  # noqa: F401
from traxla.api.pmap import pmap  # noqa: E402  (pmap: jit of a shard_map over a one-axis mesh, as JAX 0.10)
from traxla import distributed
from traxla.runtime.backend import default_backend, local_devices
from traxla.runtime.cache import clear_caches
from traxla.ir.avals import ShapedArray
from traxla import random  # noqa: F401,E402  (typed PRNG keys and samplers)
from traxla import nn, scipy  # noqa: F401,E402  (activations; scipy.special, scipy.stats.norm)
from traxla import image  # noqa: F401,E402  (resize, scale_and_translate)

__version__ = "0.1.0"

__all__ = ["config", "errors", "tree_util", "numpy", "lax", "jit", "make_jaxpr", "device_put",
           "typeof", "block_until_ready", "devices", "Array", "Device", "ShapedArray", "Lowered",
           "Compiled", "Traced", "JitFunction"]
from traxla.api.callback import effects_barrier, pure_callback  # noqa: E402
from traxla import debug, experimental  # noqa: F401,E402  (debug.print/callback, io_callback)
from traxla.api.debug_mode import disable_jit  # noqa: E402

# Top-level API of jax beyond the transformations (issue 12a).
from traxla import dtypes, tree, typing, test_util  # noqa: E402,F401
from traxla.ir.dtypes import float0  # noqa: E402,F401
from traxla.api.environment import (device_count, device_get, live_arrays,  # noqa: E402,F401
                          local_device_count, process_count, process_index, process_indices)
from traxla.api.config_contexts import (default_device, default_matmul_precision,  # noqa: E402,F401
                              enable_checks, enable_x64, ensure_compile_time_eval, numpy_dtype_promotion,
                              numpy_rank_promotion, threefry_partitionable, legacy_prng_key,
                              enable_custom_prng, auto_pcast, remove_size_one_mesh_axis_from_type,
                              thread_guard, array_garbage_collection_guard)
from traxla import stages  # noqa: E402,F401
from traxla import diagnostics  # noqa: F401,E402  (cache misses, compile reports, unrolled loops)
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape  # noqa: E402,F401
from traxla.api.named_scopes import named_call, named_scope  # noqa: E402,F401
from traxla.autodiff.checkpoint import checkpoint, remat  # noqa: E402  (gradient checkpointing)
from traxla.autodiff.remat_policies import checkpoint_policies  # noqa: E402
from traxla import ad_checkpoint  # noqa: F401,E402
from traxla.autodiff.jac import jacobian  # noqa: E402
from traxla.api.vjp_tools import (closure_convert, custom_gradient, fwd_and_bwd,  # noqa: E402
                                 linear_transpose)
from traxla import custom_derivatives  # noqa: F401,E402
from traxla import custom_batching  # noqa: F401,E402
from traxla import dlpack  # noqa: F401,E402
from traxla import profiler  # noqa: F401,E402
from traxla import ffi  # noqa: F401,E402  (native kernels through XLA FFI)
from traxla import ops  # noqa: F401,E402  (segment reductions)
from traxla.sharding import P, reshard, set_mesh  # noqa: E402,F401
from traxla.runtime.placement import Shard  # noqa: E402,F401
from traxla import version  # noqa: E402,F401
from traxla.api.environment import (copy_to_host_async, host_count, host_id, host_ids,  # noqa: E402,F401
                          make_array_from_callback, make_array_from_process_local_data,
                          make_array_from_single_device_arrays, print_environment_info)
from traxla import extend, interpreters  # noqa: E402,F401
from traxla.api.config_contexts import (check_tracer_leaks, checking_leaks, debug_infs,  # noqa: E402,F401
                                        debug_key_reuse, debug_nans, explain_cache_misses,
                                        log_compiles)
from traxla.api.config_contexts import (jax2tf_associative_scan_reductions,  # noqa: E402,F401
                                        make_user_context, no_execution, no_tracing,
                                        softmax_custom_jvp)
from traxla.api.config_contexts import allow_f16_reductions, default_prng_impl  # noqa: E402,F401
from traxla.api.config_contexts import (transfer_guard, transfer_guard_device_to_device,  # noqa: E402,F401
                                        transfer_guard_device_to_host,
                                        transfer_guard_host_to_device)
from traxla import export  # noqa: F401,E402  (traxla.export: portable StableHLO artifacts, JAX-compatible)
from traxla.state import ref as _state_ref  # noqa: E402  (array refs, JAX 0.10's mutable arrays)
from traxla import ref  # noqa: F401,E402  (the public namespace jax.ref)
from traxla.state.ref import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: E402,F401
from traxla.state.indexing import ds  # noqa: E402,F401  (jax.ds: a dynamic slice of a ref)
_state_ref.install_on_tracer()
import traxla.autodiff.vjp_object as _vjp_object  # noqa: E402
_vjp_object.ref_addupdate[0] = _state_ref.addupdate  # (with_refs accumulates with it)
from traxla import api_util, core, flatten_util, monitoring  # noqa: E402,F401  (as jax.core, ...)
from traxla import _src  # noqa: E402,F401  (jax._src: the private paths libraries import)
from traxla import lib  # noqa: E402,F401  (jax.lib, imported by jax as well)
import types as _types  # noqa: E402
from traxla.autodiff import ad as _ad  # noqa: E402

# ``jax.ad``: the markers of ``vjp(...).with_refs`` (a namespace, as JAX's).
ad = _types.SimpleNamespace(DontWant=_ad.DontWant, DidntWant=_ad.DidntWant, GradRef=_ad.GradRef,
                            GradValue=_ad.GradValue)
# ``jax.memory``: the memory-space enum, ``device_put(x, jax.memory.Space.Host)`` (JAX's).
from traxla.ir.memory_space import MemorySpace as _MemorySpace  # noqa: E402
memory = _types.SimpleNamespace(Space=_MemorySpace)
