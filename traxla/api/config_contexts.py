"""The flags JAX exposes at its top level as context managers: ``enable_x64``,
``numpy_dtype_promotion``, ``default_matmul_precision``, ``default_device``,
``numpy_rank_promotion``, and ``ensure_compile_time_eval``."""
from __future__ import annotations

import contextlib
import functools
import threading

from traxla.api.jit_caches import _new_epoch, _user_contexts
from traxla.ir.thread_state import unusual as _unusual
from traxla.ir.config import (LegacyPrngKeyState, TRANSFER_GUARD_LEVELS, check_optional_choice,
                              config)
from traxla.tracer import EvalTrace, Tracer, current_trace, set_current_trace
from traxla.runtime.backend import Device, get_backend


_MISSING = object()


class _FlagState:
    """A config flag as JAX's top-level ``State``: ``with flag(value):`` sets it for
    the block, in this thread only (as JAX); ``flag.value`` reads this thread's value."""

    def __init__(self, name: str, validate=None, doc: str = "", default=None):
        self._name = name
        self._validate = validate
        self._default = default  # the value of a bare ``with flag():`` (None: required)
        self.__doc__ = doc

    @property
    def value(self):
        return config._read(self._name)

    @contextlib.contextmanager
    def _context(self, new_val):
        if self._validate is not None:
            new_val = self._validate(new_val)
        new_val = config.check_value(self._name, new_val)  # JAX's parsing (enum classes...)
        with config.thread_local(self._name, new_val):
            yield

    def __call__(self, new_val=_MISSING):
        if new_val is _MISSING:
            if self._default is None:
                raise TypeError(f"Context manager for {self._name} config option requires "
                                "an argument representing the new value for the config option.")
            new_val = self._default
        return self._context(new_val)

    def __bool__(self):
        # JAX's words: its config states are all of the class State
        raise TypeError("bool() not supported for instances of type 'State' (did you mean to "
                        "use 'State.value' instead?)")

    def __repr__(self):
        return f"<traxla config state {self._name}={self.value!r}>"


def _choice(name, allowed):
    def validate(value):
        if value not in allowed:
            if None in allowed:  # JAX's optional enum flags say so
                raise ValueError(f"new enum value must be None or in "
                                 f"{[a for a in allowed if a is not None]}, got {value} of type "
                                 f"{type(value)}.")
            raise ValueError(f"new enum value must be in {allowed}, got {value!r} of type "
                             f"{type(value)} for {name}.")
        return value
    return validate


_PRECISIONS = (None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
               "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
               "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
               "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")


def _validate_device(value):
    """A Device or a platform name, as JAX's ``jax_default_device`` accepts; new arrays
    and programs then go there (``runtime.placement.default_placement``)."""
    if value is None:
        return None
    if isinstance(value, str):
        if value not in ("cpu", "gpu", "tpu"):
            raise ValueError(
                "jax.default_device must be passed either a Device object (e.g. "
                f"`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', got: "
                f"{value!r}")
        get_backend(value)  # an absent platform fails here, naming what is present
        return value
    if not isinstance(value, Device):
        raise ValueError(
            "jax.default_device must be passed either a Device object (e.g. "
            f"`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', got: "
            f"{value!r}")
    return value


def _validate_promotion(value):
    return _choice("jax_numpy_dtype_promotion", ("standard", "strict"))(value)


config.on_update(lambda name, value: _validate_promotion(value)
                 if name == "numpy_dtype_promotion" else None)

enable_x64 = _FlagState("enable_x64", bool,
                        "Enables 64-bit types (int64, float64) for the block: `with enable_x64():`",
                        default=True)
numpy_dtype_promotion = _FlagState(
    "numpy_dtype_promotion", _validate_promotion,
    "'standard' (JAX's lattice) or 'strict' (only weak types promote; TypePromotionError "
    "otherwise).")
numpy_rank_promotion = _FlagState(
    "numpy_rank_promotion", _choice("jax_numpy_rank_promotion", ("allow", "warn", "raise")),
    "Whether NumPy-style rank promotion is allowed ('allow'), warned about or refused.")
default_matmul_precision = _FlagState(
    "default_matmul_precision", _choice("jax_default_matmul_precision", _PRECISIONS),
    "The precision of matrix products whose precision argument is None.")
enable_checks = _FlagState("check_jaxprs", bool,
                           "Type-checks every traced jaxpr (traxla's check_jaxprs flag).",
                           default=True)
default_device = _FlagState("default_device", _validate_device,
                            "The device computations run on when no placement says otherwise.")
config.on_update(lambda name, value: _validate_device(value) if name == "default_device"
                 else None)  # config.update("jax_default_device", ...) validates as the block
debug_nans = _FlagState("debug_nans", bool, "A NaN produced by a program raises "
                        "FloatingPointError naming the primitive: `with debug_nans(True):`.",
                        default=True)
debug_infs = _FlagState("debug_infs", bool, "Likewise for an inf.", default=True)
log_compiles = _FlagState("log_compiles", bool, "Logs each compilation (logger 'traxla').",
                          default=True)
check_tracer_leaks = _FlagState(
    "check_tracer_leaks", bool, "A finished trace (jit, make_jaxpr, a control-flow body, "
    "vmap) whose tracers are still referenced raises, naming them and what holds them.",
    default=True)
checking_leaks = functools.partial(check_tracer_leaks, True)
no_execution = _FlagState(
    "no_execution", bool, "Disallow JAX executions: running a compiled program raises "
    "RuntimeError.", default=True)
def _validate_key_reuse(value):
    """JAX's key-reuse checker is not part of traxla: the flag stays off."""
    if value:
        raise NotImplementedError("jax_debug_key_reuse: traxla does not check PRNG key reuse "
                                  "(the flag can only be False)")
    return False


config.on_update(lambda name, value: _validate_key_reuse(value)
                 if name == "debug_key_reuse" else None)
debug_key_reuse = _FlagState(
    "debug_key_reuse", _validate_key_reuse, "Checks PRNG keys for reuse (JAX's; traxla does "
    "not check, so only False is accepted).", default=True)
no_tracing = _FlagState(
    "no_tracing", bool, "Disallow tracing for JIT compilation: a jitted function that would "
    "trace raises RuntimeError.", default=True)
softmax_custom_jvp = _FlagState(
    "softmax_custom_jvp", bool, "Use the custom_jvp rule for nn.softmax (the forward pass "
    "without stop_gradient; the tangent y * (t - sum(y * t))).", default=True)
jax2tf_associative_scan_reductions = _FlagState(
    "jax2tf_associative_scan_reductions", bool, "How jax2tf lowers the cumulative reductions: "
    "read by jax2tf only (JAX 0.10.2 itself never reads it; nor does traxla).", default=True)
explain_cache_misses = _FlagState(
    "explain_cache_misses", bool, "Logs why a jitted function traced or compiled again "
    "(logger 'traxla'): `with explain_cache_misses(True):`.", default=True)
threefry_partitionable = _FlagState(
    "threefry_partitionable", bool,
    "Threefry keys derived as JAX's partitionable implementation (True, the default) or "
    "with its original iota counters (False): random bits and split keys differ.",
    default=True)
legacy_prng_key = _FlagState(
    "legacy_prng_key", LegacyPrngKeyState,
    "Raw uint32 keys passed to traxla.random: 'allow', 'warn' or 'error'.")
enable_custom_prng = _FlagState(
    "enable_custom_prng", bool,
    "Functions of traxla.random given raw uint32 keys (and PRNGKey) return typed keys, "
    "with a FutureWarning for the raw key.", default=True)

default_prng_impl = _FlagState(
    "default_prng_impl", None,
    "The PRNG implementation of new keys: JAX's names are accepted; traxla implements "
    "'threefry2x32' (another raises NotImplementedError).")


allow_f16_reductions = _FlagState(
    "allow_f16_reductions", bool, "If False, `reduce_sum` on `f16` or `bf16` inputs will raise "
    "an error. Defaults to True.", default=True)


# JAX's top-level states of features traxla does not have: the default value is what traxla
# does; another raises NotImplementedError naming the option (config_options: unsupported).
auto_pcast = _FlagState("auto_pcast", bool, "Inserts pcasts automatically where shard_map "
                        "values of different varying axes meet (JAX's default: True).",
                        default=True)
remove_size_one_mesh_axis_from_type = _FlagState(
    "remove_size_one_mesh_axis_from_type", bool,
    "Drops mesh axes of size one from array types' shardings.", default=True)
thread_guard = _FlagState("thread_guard", bool, "Errors when JAX's multi-process "
                          "computations are launched from several threads.", default=True)
array_garbage_collection_guard = _FlagState(
    "array_garbage_collection_guard", _choice("array_garbage_collection_guard",
                                              (None, "allow", "log", "fatal")),
    "What happens when an Array is garbage collected instead of deleted explicitly "
    "('allow', 'log' or 'fatal').")


def _transfer_guard_state(direction):
    return _FlagState(
        f"transfer_guard_{direction}",
        lambda v: check_optional_choice(v, TRANSFER_GUARD_LEVELS),
        f"Select the transfer guard level for {direction.replace('_', '-')} transfers. "
        'Default is "allow".')


transfer_guard_host_to_device = _transfer_guard_state("host_to_device")
transfer_guard_device_to_device = _transfer_guard_state("device_to_device")
transfer_guard_device_to_host = _transfer_guard_state("device_to_host")
_transfer_guard = _FlagState("transfer_guard",
                             lambda v: check_optional_choice(v, TRANSFER_GUARD_LEVELS))


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """A contextmanager to control the transfer guard level for all transfers (in this
    thread, for the block), as JAX's: "allow", "log", "disallow", "log_explicit" or
    "disallow_explicit" (see traxla/runtime/transfer_guard.py)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(transfer_guard_host_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_host(new_val))
        stack.enter_context(_transfer_guard(new_val))
        yield


class _CompileTimeEvalTrace(EvalTrace):
    """Evaluates primitives on concrete operands right away, even while a function is
    being staged; operations on traced values still go to the enclosing trace."""

    def __init__(self, enclosing):
        self.enclosing = enclosing

    def process_primitive(self, prim, args, params):
        if any(isinstance(a, Tracer) for a in args):
            with set_current_trace(self.enclosing):
                return self.enclosing.process_primitive(prim, args, params)
        return super().process_primitive(prim, args, params)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside ``jit``, computes operations on concrete values (constants, closed-over
    arrays) eagerly, so their results are concrete Arrays usable in Python control flow."""
    enclosing = current_trace()
    if isinstance(enclosing, EvalTrace):
        yield
        return
    with set_current_trace(_CompileTimeEvalTrace(enclosing)):
        yield


__all__ = ["check_tracer_leaks", "checking_leaks", "debug_infs", "debug_key_reuse", "debug_nans", "log_compiles", "enable_checks", "enable_x64", "numpy_dtype_promotion", "numpy_rank_promotion",
           "default_matmul_precision", "default_device", "ensure_compile_time_eval",
           "threefry_partitionable", "legacy_prng_key", "enable_custom_prng",
           "allow_f16_reductions", "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_device",
           "transfer_guard_device_to_host"]


class _UserContextBlock:
    """``with ctx(value):``: the calling thread's value of a user context for the block."""

    __slots__ = ("_config", "_new_value", "_prev_value")

    def __init__(self, user_config, new_value):
        self._config = user_config
        self._new_value = new_value

    def __enter__(self):
        local = self._config._local
        self._prev_value = local.__dict__.get("value", _MISSING)
        local.value = self._new_value
        config.current.local_blocks += 1  # the hit paths (keyed by types alone) step aside
        _unusual.append(None)

    def __exit__(self, exc_type, exc_val, exc_tb):
        config.current.local_blocks -= 1
        _unusual.pop()
        local = self._config._local
        if self._prev_value is _MISSING:
            del local.value
        else:
            local.value = self._prev_value


class UserConfig:
    """A ``jit`` cache sensitive context (``make_user_context``): its value is part of every
    jit cache key, so a function traced under one value is traced again under another."""

    def __init__(self, default_value):
        self._global = default_value
        self._local = threading.local()

    @property
    def value(self):
        return self._local.__dict__.get("value", self._global)

    def get_global(self):
        return self._global

    def set_global(self, new_value):
        self._global = new_value
        _new_epoch(None, new_value)  # the hit paths forget what they served under the old value

    def __call__(self, new_value):
        return _UserContextBlock(self, new_value)


def make_user_context(default_value=None):
    """Creates a ``jax.jit`` cache sensitive context: when its value changes (``with
    ctx(value):`` in this thread, or ``ctx.set_global(value)``), jitted functions are traced,
    lowered and compiled again rather than served from their caches.

    Adding new user contexts is not thread-safe; using one once constructed is."""
    ctx = UserConfig(default_value)
    _user_contexts.append(ctx)
    return ctx
