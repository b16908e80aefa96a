"""Configuration flags: global values, and per-thread values for ``with`` blocks.

As in JAX, ``config.update(name, value)`` sets a flag for every thread, while the context
managers (``with enable_x64():``, ``debug_nans``, ``disable_jit``... built on
``config.thread_local``) set it for the calling thread only, so a block in one thread never
changes what another traces or runs. ``config.current`` is the calling thread's view (read
on hot paths: ``config.current.enable_x64``).

Lives in ``ir/`` because dtype canonicalization (the x64 switch) is part of the
type system; ``traxla.config`` re-exports it.
"""
from __future__ import annotations

import contextlib
import enum
import os
import threading

from traxla.ir.thread_state import unusual as _unusual

_UNSET = object()


class LegacyPrngKeyState(enum.StrEnum):
    """What ``jax_legacy_prng_key`` does when a raw ``uint32`` key reaches traxla.random."""
    ALLOW = 'allow'
    WARN = 'warn'
    ERROR = 'error'


# JAX's transfer guard options (``transfer_guard`` sets the three others) and their levels
TRANSFER_GUARDS = ("transfer_guard", "transfer_guard_host_to_device",
                   "transfer_guard_device_to_device", "transfer_guard_device_to_host")
TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def check_optional_choice(value, choices):
    """JAX's error for a value of an optional enum flag outside its choices."""
    if value is not None and (type(value) is not str or value not in choices):
        raise ValueError(f"new enum value must be None or in {list(choices)}, got {value} of "
                         f"type {type(value)}.")
    return value


class _FlagValues(threading.local):
    """A thread's view of the flags: the class attributes (of one subclass per ``Config``)
    hold the global values; a ``with`` block sets an instance attribute, which only its
    thread sees. ``local_blocks`` counts this thread's open blocks (hot paths that serve
    cached programs by argument types alone step aside while it is nonzero)."""

    local_blocks = 0


class Config:
    """Typed flags, settable with ``update(name, value)`` as in ``jax.config``."""

    _defaults = {
        "enable_x64": False,
        "num_cpu_devices": 1,
        "check_jaxprs": False,
        "platforms": None,             # "cpu", "cuda"/"gpu", a comma list; None: automatic
        "cuda_visible_devices": "all",
        "debug_nans": False,           # a NaN produced by a program raises FloatingPointError
        "debug_infs": False,           # likewise for an inf
        "log_compiles": False,         # log each compilation (logger "traxla", WARNING)
        "disable_jit": False,          # jitted functions run as plain Python
        "check_tracer_leaks": False,   # a finished trace whose tracers are still referenced raises
        # diagnostics (traxla/diagnostics/)
        "explain_cache_misses": False,  # log why jit traced/compiled again (logger "traxla")
        "max_retraces": None,           # retrace budget per jitted function (None: no limit)
        "retrace_budget_action": "warn",  # "warn" or "raise" when the budget is exceeded
        "warn_unrolled_loops": True,    # UnrolledLoopWarning for long unrolled Python loops
        "unrolled_loop_min_repeats": 16,  # ... from this many repetitions on
        "reroll_loops": False,          # rewrite unrolled loops into scans before lowering
        "compile_report_seconds": 1.0,  # with log_compiles: log the compile report above this
        "numpy_dtype_promotion": "standard",   # or "strict": only weak types promote
        "default_matmul_precision": None,      # None, "bfloat16", "tensorfloat32", "float32", ...
        "default_device": None,                 # a Device, or None: the backend's first device
        "numpy_rank_promotion": "allow",
        # the persistent compilation cache (runtime/compilation_cache.py), as JAX's options
        "compilation_cache_dir": None,
        "persistent_cache_min_compile_time_secs": 1.0,
        "persistent_cache_min_entry_size_bytes": 0,
        "compilation_cache_max_size": -1,       # bytes; -1: unbounded
        # Bounds of the LRU caches (entries): executables per jitted function, traced jaxprs
        # per function, and one-primitive executables of eager evaluation.
        "jit_cache_size": 1024,
        "trace_cache_size": 1024,
        "eager_cache_size": 4096,
        # traxla's own frames removed from tracebacks (ir/traceback_util.py), as JAX's flag
        "traceback_filtering": "auto",
        # JAX's options that libraries set: leaked-tracer checks after each staging
        # (``jax.checking_leaks()``); the key derivation mode (traxla's keys are partitionable).
        "check_tracer_leaks": False,
        # PRNG options, as JAX's: the Threefry key derivation (True: JAX's partitionable
        # counters; False: the original iota counters), raw uint32 keys allowed, warned
        # about or refused, and raw keys' results as typed keys (enable_custom_prng).
        "threefry_partitionable": True,
        # JAX's guards: no jitted program may run (``no_execution``), none may be traced
        # (``no_tracing``); nn.softmax's custom-JVP form; a flag only jax2tf reads (JAX 0.10.2
        # itself reads it nowhere)
        "no_execution": False,
        "no_tracing": False,
        "debug_key_reuse": False,  # only False: traxla does not check PRNG key reuse
        "softmax_custom_jvp": False,
        "jax2tf_associative_scan_reductions": False,
        "legacy_prng_key": LegacyPrngKeyState.ALLOW,
        "enable_custom_prng": False,
        # transfer guards (runtime/transfer_guard.py), as JAX's: None reads as "allow";
        # ``transfer_guard`` is set-only, its update sets the three directions
        "allow_f16_reductions": True,  # False: reduce_sum refuses float16/bfloat16 operands
        "transfer_guard": None,
        "transfer_guard_host_to_device": None,
        "transfer_guard_device_to_device": None,
        "transfer_guard_device_to_host": None,
    }
    # Flags whose values are converted on update, as JAX's enum-class flags.
    _coercions = {"legacy_prng_key": LegacyPrngKeyState, "threefry_partitionable": bool,
                  "enable_custom_prng": bool, "allow_f16_reductions": bool}
    # Flags with a fixed set of values: JAX's enum flags.
    _choices = {"traceback_filtering": ("off", "tracebackhide", "remove_frames",
                                        "quiet_remove_frames", "auto")}
    # Flags that are None or one of a fixed set of values: JAX's optional enum flags.
    _optional_choices = dict.fromkeys(TRANSFER_GUARDS, TRANSFER_GUARD_LEVELS)

    def __init__(self):
        self._values = dict(self._defaults)
        self._values.update(self._environment())
        self._explicit: set = set()  # options set by update(): the environment yields to them
        self._listeners = []
        self._globals = type("FlagValues", (_FlagValues,), dict(self._values))
        self.current = self._globals()  # the calling thread's values

    @staticmethod
    def _environment() -> dict:
        """The options the environment sets: JAX_ENABLE_X64, JAX_NUM_CPU_DEVICES (or XLA_FLAGS'
        forced host device count), JAX_PLATFORMS, JAX_TRACEBACK_FILTERING (and their TRAXLA_
        spellings)."""
        out = {}
        env = os.environ.get("TRAXLA_ENABLE_X64") or os.environ.get("JAX_ENABLE_X64")
        if env:
            out["enable_x64"] = env.lower() in ("1", "true", "yes")
        devices = (os.environ.get("TRAXLA_NUM_CPU_DEVICES") or os.environ.get("JAX_NUM_CPU_DEVICES")
                   or _forced_host_device_count(os.environ.get("XLA_FLAGS", "")))
        if devices:
            out["num_cpu_devices"] = int(devices)
        platforms = os.environ.get("TRAXLA_PLATFORMS", os.environ.get("JAX_PLATFORMS"))
        if platforms:
            out["platforms"] = platforms
        filtering = os.environ.get("TRAXLA_TRACEBACK_FILTERING",
                                   os.environ.get("JAX_TRACEBACK_FILTERING"))
        if filtering is not None:
            if filtering not in Config._choices["traceback_filtering"]:
                raise ValueError(
                    f'Invalid value "{filtering}" for JAX flag jax_traceback_filtering')
            out["traceback_filtering"] = filtering
        return out

    def read_environment(self, names=None) -> None:
        """Applies the environment again to the options ``update`` has not set (all, or
        ``names``): JAX reads it when ``jax`` is imported and XLA_FLAGS when the CPU backend
        starts, which under the drop-in (traxla.as_jax) come after traxla's own import."""
        for name, value in self._environment().items():
            if (names is None or name in names) and name not in self._explicit \
                    and self._values[name] != value:
                self.update(name, value)
                self._explicit.discard(name)

    def _known(self, name: str) -> str:
        name = name[4:] if name.startswith("jax_") else name
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        return name

    def update(self, name: str, value):
        """Sets ``name`` for every thread (a thread inside a ``thread_local`` block of it
        keeps its block's value until the block ends), as ``jax.config.update``."""
        name = self._known(name)
        choices = self._choices.get(name)
        if choices is not None and value not in choices:
            raise ValueError(f"new enum value must be in {list(choices)}, got {value} of type "
                             f"{type(value)}.")
        optional = self._optional_choices.get(name)
        if optional is not None:
            check_optional_choice(value, optional)
        coerce = self._coercions.get(name)
        if coerce is not None:
            value = coerce(value)
        if name == "transfer_guard":  # JAX's hook: sets each direction's global value
            for direction in TRANSFER_GUARDS[1:]:
                self.update(direction, value)
        for listener in self._listeners:
            listener(name, value)
        self._explicit.add(name)
        self._values[name] = value
        setattr(self._globals, name, value)

    @property
    def values(self) -> dict:
        """Every option's global value, by JAX's name (``jax_enable_x64``)."""
        return {"jax_" + k: v for k, v in self._values.items()}

    def _read(self, name: str):
        return getattr(self.current, self._known(name))

    def parse_flags_with_absl(self):
        """Applies the ``--jax_NAME=VALUE`` (and ``--jax_NAME`` / ``--nojax_NAME`` for
        booleans) arguments of ``sys.argv`` before the first ``--``, as JAX's."""
        import sys
        for arg in sys.argv[1:]:
            if arg == "--":
                break
            if not (arg.startswith("--jax_") or arg.startswith("--nojax_")):
                continue
            body, _, text = arg[2:].partition("=")
            negated = body.startswith("nojax_")
            name = body[len("nojax_"):] if negated else body[len("jax_"):]
            if name not in self._values:
                continue  # as absl with known_only=True: other flags are not JAX's
            self.update(name, _parse_flag(self._values[name], text, negated))
        _absl_parse_once()

    def config_with_absl(self):
        """As ``parse_flags_with_absl`` (traxla defines no absl flags of its own)."""
        self.parse_flags_with_absl()

    def read(self, name: str):
        """The value the calling thread sees."""
        try:
            return getattr(self.current, name)
        except AttributeError:
            raise KeyError(name) from None

    def on_update(self, listener):
        """Registers ``listener(name, value)``, called before a flag's global value changes."""
        self._listeners.append(listener)

    @property
    def enable_x64(self) -> bool:
        return self.current.enable_x64

    @property
    def x64_enabled(self) -> bool:
        """The x64 switch the calling thread sees (JAX's older spelling, which jaxopt and
        other libraries still read as ``jax.config.x64_enabled``)."""
        return self.current.enable_x64

    @contextlib.contextmanager
    def flag(self, name: str, value):
        """Sets ``name`` globally for the block (``update``, then the old value back)."""
        old = self._values[self._known(name)]
        self.update(name, value)
        try:
            yield
        finally:
            self.update(name, old)

    @contextlib.contextmanager
    def thread_local(self, name: str, value):
        """Sets ``name`` for the calling thread only, for the block (JAX's config context
        managers: ``with enable_x64():``)."""
        name = self._known(name)
        current = self.current
        saved = current.__dict__.get(name, _UNSET)
        setattr(current, name, value)
        current.local_blocks += 1
        _unusual.append(None)  # removed once the flag is restored
        try:
            yield
        finally:
            current.local_blocks -= 1
            if saved is _UNSET:
                delattr(current, name)
            else:
                setattr(current, name, saved)
            _unusual.pop()

    def __getattr__(self, name):
        values = self.__dict__.get("_values", {})
        key = name[4:] if name.startswith("jax_") else name
        if key in values:
            return getattr(self.__dict__["current"], key)
        raise AttributeError(name)


_absl_parsed = False


def _absl_parse_once():
    """As JAX's, the first ``parse_flags_with_absl`` also has absl parse its flags (known
    ones only), so that absl's flags (``--test_tmpdir``) read as parsed afterwards; without
    absl installed there is nothing to parse."""
    global _absl_parsed
    if _absl_parsed:
        return
    try:
        import absl.flags
    except ImportError:
        return
    absl.flags.FLAGS([""], known_only=True)
    _absl_parsed = True


def _parse_flag(current, text: str, negated: bool):
    """A flag's text as the type of its current value (bool flags: JAX's spellings)."""
    if isinstance(current, bool) or (current is None and text.lower() in ("true", "false")):
        if text == "":
            return not negated
        value = text.lower() in ("1", "true", "t", "yes", "y")
        return not value if negated else value
    if isinstance(current, int):
        return int(text)
    if isinstance(current, float):
        return float(text)
    return text if text != "" else None


def _forced_host_device_count(xla_flags: str):
    """N of ``--xla_force_host_platform_device_count=N`` in XLA_FLAGS (as JAX honours it)."""
    for flag in xla_flags.split():
        if flag.startswith("--xla_force_host_platform_device_count="):
            return flag.split("=", 1)[1]
    return None


config = Config()
