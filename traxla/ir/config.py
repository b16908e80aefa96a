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
import os
import threading

from traxla.ir.config_options import (JAX_OPTIONS, ENUM_CLASSES, LegacyPrngKeyState,  # noqa: F401
                                      NumpyDtypePromotion, ExplicitX64Mode, RuntimeTracebackMode,
                                      parser as _jax_parser)
from traxla.ir.thread_state import unusual as _unusual

_UNSET = object()


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


def _key(jax_name: str) -> str:
    """traxla's key of a JAX option: its name without ``jax_`` (``check_vma`` as it is)."""
    return jax_name[4:] if jax_name.startswith("jax_") else jax_name


# JAX's name -> traxla's key (jax_enable_checks is traxla's check_jaxprs), and back
_JAX_KEYS = {row[0]: _key(row[0]) for row in JAX_OPTIONS}
_JAX_KEYS["jax_enable_checks"] = "check_jaxprs"
_JAX_NAMES = {key: name for name, key in _JAX_KEYS.items()}
_OPTION = {_JAX_KEYS[row[0]]: row for row in JAX_OPTIONS}  # key -> JAX's row
# JAX's options that are States: ``config.read`` refuses them (all but jax_enable_x64), and
# they are ``config.jax_*`` attributes; JAX's Flags are the reverse.
_READ_REFUSED = frozenset(row[0] for row in JAX_OPTIONS if row[4]) - {"jax_enable_x64"}
_NOT_ATTRIBUTES = frozenset(row[0] for row in JAX_OPTIONS if not row[4])


def _jax_default(row):
    _, kind, default, choices, _, _ = row
    return ENUM_CLASSES[choices](default) if kind == "enum_class" else default


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
        "num_cpu_devices": -1,          # -1: one (or XLA_FLAGS' forced count)
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
    def __init__(self):
        self._values = dict(self._defaults)
        for key, row in _OPTION.items():  # JAX's every option, with JAX's default
            if key not in self._values or key == "numpy_dtype_promotion":
                self._values[key] = _jax_default(row)
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
            if filtering not in _OPTION["traceback_filtering"][3]:
                raise ValueError(
                    f'Invalid value "{filtering}" for JAX flag jax_traceback_filtering')
            out["traceback_filtering"] = filtering
        for row in JAX_OPTIONS:  # JAX's other options, from JAX_NAME (as JAX reads them)
            key = _JAX_KEYS[row[0]]
            text = os.environ.get(row[0].upper())
            if text is not None and key not in out:
                value = _environment_value(row, text)
                if row[5] == "unsupported" and value != _jax_default(row):
                    _warn_ignored(row[0].upper(), text)
                else:
                    out[key] = value
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
        """traxla's key of option ``name``: JAX's name (``jax_enable_x64``) or traxla's key
        (``enable_x64``); JAX's error for any other."""
        key = _JAX_KEYS.get(name)
        if key is not None:
            return key
        if name in self._values:
            return name
        if name.startswith("jax_") and name[4:] in self._values and name[4:] not in _OPTION:
            return name[4:]  # traxla's own options, spelled as JAX's (jax_max_retraces)
        raise AttributeError(f"Unrecognized config option: {name}")

    def update(self, name: str, val):
        """Sets ``name`` for every thread (a thread inside a ``thread_local`` block of it
        keeps its block's value until the block ends), as ``jax.config.update(name, val)``
        (JAX's parameter names: ``val=`` by keyword works): JAX's validation and errors; a
        value traxla cannot honour raises NotImplementedError."""
        name = self._known(name)
        value = self.check_value(name, val)
        if name == "transfer_guard":  # JAX's hook: sets each direction's global value
            for direction in TRANSFER_GUARDS[1:]:
                self.update(direction, value)
        for listener in self._listeners:
            listener(name, value)
        self._explicit.add(name)
        self._values[name] = value
        setattr(self._globals, name, value)

    def check_value(self, key: str, value):
        """A new value of option ``key`` as JAX parses it (JAX's errors), refused with
        NotImplementedError where traxla does not implement that value's effect."""
        row = _OPTION.get(key)
        if row is None:
            return value
        jax_name, kind, default, choices, is_state, effect = row
        parse = _jax_parser(jax_name, kind, choices) if is_state else None
        if parse is not None:
            value = parse(value)
        if effect == "unsupported" and value != _jax_default(row):
            raise NotImplementedError(
                f"{jax_name}={value!r}: traxla does not implement this option's effect (it "
                f"runs as with JAX's default, {_jax_default(row)!r})")
        return value

    @property
    def values(self) -> dict:
        """Every option's global value, by JAX's name (``jax_enable_x64``; traxla's own
        options as ``jax_`` + their key)."""
        return {_JAX_NAMES.get(k, "jax_" + k): v for k, v in self._values.items()}

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
            try:
                key = self._known(body[len("no"):] if negated else body)
            except AttributeError:
                continue  # as absl with known_only=True: other flags are not JAX's
            self.update(key, _parse_flag(self._values[key], text, negated))
        _absl_parse_once()

    def config_with_absl(self):
        """As ``parse_flags_with_absl`` (traxla defines no absl flags of its own)."""
        self.parse_flags_with_absl()

    def read(self, name: str):
        """The value the calling thread sees. As JAX's, JAX's options that have a context
        manager are refused (read as ``config.jax_NAME``); traxla's keys (``enable_x64``)
        are read."""
        if name in _READ_REFUSED:
            raise AttributeError(
                "For flags with a corresponding contextmanager, read their value via e.g. "
                f"`config.{name}` rather than `config.FLAGS.{name}`.")
        return getattr(self.current, self._known(name))

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
        if name not in _NOT_ATTRIBUTES:  # JAX's Flags are no attributes
            key = _JAX_KEYS.get(name, name)
            if key not in values and name.startswith("jax_") and name[4:] not in _OPTION:
                key = name[4:]
            if key in values:
                return getattr(self.__dict__["current"], key)
        raise AttributeError(f"'Config' object has no attribute '{name}'")


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


def _environment_value(row, text: str):
    """An option's value from its environment variable, as JAX parses it."""
    name, kind, default, choices = row[:4]
    if kind == "bool":
        value = text.lower()
        if value in ("y", "yes", "t", "true", "on", "1"):
            return True
        if value in ("n", "no", "f", "false", "off", "0"):
            return False
        raise ValueError(f"invalid truth value {value!r} for environment {name.upper()!r}")
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "enum_class":
            return ENUM_CLASSES[choices](text)
    except ValueError:
        raise ValueError(f'Invalid value "{text}" for JAX flag {name}') from None
    if kind in ("enum", "optenum") and text not in choices:
        raise ValueError(f'Invalid value "{text}" for JAX flag {name}')
    return text


_warned_ignored: set = set()


def _warn_ignored(variable: str, text: str):
    if variable not in _warned_ignored:
        _warned_ignored.add(variable)
        import warnings
        warnings.warn(f"{variable}={text}: traxla does not implement this option's effect "
                      "and ignores it", RuntimeWarning, stacklevel=2)


def _forced_host_device_count(xla_flags: str):
    """N of ``--xla_force_host_platform_device_count=N`` in XLA_FLAGS (as JAX honours it)."""
    for flag in xla_flags.split():
        if flag.startswith("--xla_force_host_platform_device_count="):
            return flag.split("=", 1)[1]
    return None


config = Config()
