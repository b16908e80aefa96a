"""What ``jit``'s caches are keyed by and when they are dropped: the trace context (the
flags in every key), the configuration epoch that retires the hit paths, the traced
jaxprs shared per function (dropped when a flag that changes tracing changes) and the
executables compiled from them (shared by every ``jit`` of the function), and the
kinds of compiled-cache entry that are not executables."""
from __future__ import annotations

import operator
import weakref

from traxla.ir.config import config
from traxla.ir.thread_state import unusual as _unusual
from traxla.runtime.cache import BoundedCache, on_clear
from traxla.runtime.placement import _mesh_stack

# Flags that change what tracing produces: part of every trace and compile cache key (as
# in JAX's trace context), so a program traced under one setting never serves another.
_TRACE_CONTEXT_FLAGS = ("enable_x64", "numpy_dtype_promotion", "numpy_rank_promotion",
                        "default_matmul_precision", "threefry_partitionable",
                        "allow_f16_reductions", "softmax_custom_jvp")


_read_trace_context = operator.attrgetter(*_TRACE_CONTEXT_FLAGS)  # (one C call a trace)


def _trace_context() -> tuple:
    out = _read_trace_context(config.current)  # the calling thread's values
    if _user_contexts:  # ``make_user_context``'s values: part of every key too
        out += tuple([u.value for u in _user_contexts])
    if _unusual and _mesh_stack:  # the mesh context (as JAX's): it types and places programs
        out += (_mesh_stack[-1],)
    return out


_user_contexts: list = []  # every ``make_user_context`` (they are few and never dropped)


# Bumped by every configuration change, which also empties every jit's hit paths at once
# (their entries were made under the old flags; the hit paths themselves check nothing).
_config_epoch = [0]


def _new_epoch(name, value):
    _config_epoch[0] += 1
    for jitted in list(_all_jits):
        jitted._forget_fast_paths()

# Flags that change what a trace produces but are not in the cache keys: when one changes,
# every cached trace and executable is dropped (they are rarely switched).
_TRACE_FLAGS = ("numpy_dtype_promotion", "default_matmul_precision", "numpy_rank_promotion",
                "random_seed_offset")
_all_jits: weakref.WeakSet = weakref.WeakSet()
config.on_update(_new_epoch)


def _drop_traces(name, value):
    if name in _TRACE_FLAGS and value != config.read(name):
        for per_options in list(_traces_by_function.values()):
            for traces in per_options.values():
                traces.clear()
        _executables_by_jaxpr.clear()
        for jitted in list(_all_jits):
            jitted._compiled.clear()
            jitted._fast.clear()


config.on_update(_drop_traces)


# Traced jaxprs are cached per function (and jit options), not per ``jit`` object, as JAX
# does: ``jit(f)`` written twice traces ``f`` once, so both calls share one jaxpr (and it
# prints hoisted). Weak keys: a cached trace never keeps a function alive.
_traces_by_function: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# Executables shared by every ``jit`` of one function, as JAX's lowering and compilation
# caches are keyed by the traced jaxpr: ``jit(f)(x)`` written twice (a library that wraps
# ``f`` again on every call) compiles once. Keyed weakly by the shared traced jaxpr, then by
# what lowering and compiling take beside it (name, donation, keep_unused, compiler
# options): a dropped trace drops its executables, and a new function object (a lambda made
# in a loop) traces and compiles again, as in JAX.
_executables_by_jaxpr: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def shared_executable(closed, options):
    """The (lowered program, executable) another ``jit`` of the same function compiled from
    ``closed`` with ``options``, or None."""
    per_jaxpr = _executables_by_jaxpr.get(closed)
    return None if per_jaxpr is None else per_jaxpr.get(options)


def share_executable(closed, options, program_and_executable) -> None:
    _executables_by_jaxpr.setdefault(closed, {})[options] = program_and_executable


on_clear(_executables_by_jaxpr.clear)  # jax.clear_caches()


def _new_trace_cache() -> BoundedCache:
    return BoundedCache(lambda: config.read("trace_cache_size"))


def _trace_cache(fun, options) -> BoundedCache:
    try:
        per_options = _traces_by_function.setdefault(fun, {})
    except TypeError:  # neither hashable nor weakly referenceable: a cache of its own
        return _new_trace_cache()
    cache = per_options.get(options)
    if cache is None:
        cache = per_options.setdefault(options, _new_trace_cache())
    return cache


class _OnMesh:
    """A compiled-cache entry saying: this program holds a shard_map, run it on its mesh."""

    __slots__ = ("mesh",)

    def __init__(self, mesh):
        self.mesh = mesh


class _ClosesOverRefs:
    """A compiled-cache entry saying: this program mutates a Ref it closes over (its refs
    become extra arguments and results: ``ref.call_closing_over_refs``)."""

    __slots__ = ("closed", "out_tree")

    def __init__(self, closed, out_tree):
        self.closed, self.out_tree = closed, out_tree


def _forget_fast(fast: dict):
    """Eviction callback of a jit's executable cache: the hot-path dict drops the entry too
    (a closure over the dict, not the JitFunction, so that no reference cycle keeps a
    deleted function's executables alive)."""
    def evict(key, entry):
        fast_key = getattr(entry, "fast_key", None)
        if fast_key is not None and fast.get(fast_key) is entry:
            fast.pop(fast_key, None)
        for more in getattr(entry, "more_keys", ()):
            if fast.get(more) is entry:
                fast.pop(more, None)
    return evict


# What a jitted function keeps in its ``__dict__`` beside what it copies from its function
# (``jit(jit(f))`` copies the inner one's attributes of ``f``, not its state).
_JIT_STATE = frozenset((
    "fun", "static_argnums", "static_argnames", "donate_argnums", "donate_argnames",
    "keep_unused", "inline", "in_shardings", "out_shardings", "_device_placement",
    "compiler_options", "_plain", "_traced", "_fast", "_tree_fast", "_static_hits",
    "_static_hit2", "_compiled", "_lifted", "_epoch", "_signature", "name", "last_trace_seconds"))


def is_jit_state(key: str) -> bool:
    return key in _JIT_STATE or key.startswith("_diag_")
