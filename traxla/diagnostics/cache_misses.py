"""Why ``jit`` traced or compiled again: the diff of a missed cache key against the
closest key already cached, per argument path, as a readable log message.

``jit`` keeps two caches (see ``traxla/api/jit_function.py`` and ``jit_slow_path.py``):
traced jaxprs keyed by ``(input tree, static arguments, avals, x64)``, shared by every
``jit`` of the same function, and compiled executables per ``jit`` object keyed the same
way (plus the argument placements on a mesh). With ``config.update("explain_cache_misses", True)``
each miss logs (logger ``traxla``, WARNING) which function, which argument and what
changed: shape, dtype, weak type, sharding, static value, pytree structure or config.
"""
from __future__ import annotations

import inspect
import logging
import sys
import warnings
import weakref

from traxla import tree_util
from traxla.api.jit_caches import _TRACE_CONTEXT_FLAGS
from traxla.ir.config import config
from traxla.tracer.traces import user_frame

logger = logging.getLogger("traxla")

# How each part of a key is named, in order of severity (lower: explained first).
_CONFIG, _TREE, _STATIC, _TYPES, _PLACEMENT = range(5)


class RetraceBudgetExceeded(RuntimeError):
    """A jitted function traced more often than its retrace budget allows."""


class RetraceWarning(UserWarning):
    """A jitted function traced more often than its retrace budget allows."""


def function_location(fun) -> str:
    """``name defined at file:line`` for messages."""
    inner = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(inner, "__code__", None) or getattr(getattr(inner, "func", None),
                                                       "__code__", None)
    name = getattr(inner, "__name__", type(inner).__name__)
    if code is None:
        return name
    return f"{name} defined at {code.co_filename}:{code.co_firstlineno}"


def call_site() -> str:
    """The innermost frame outside traxla (where the user called the function)."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return "<unknown>"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def _aval_str(aval, other) -> str:
    text = aval.str_short(True)
    if getattr(aval, "sharding_type", None) != getattr(other, "sharding_type", None):
        spec = getattr(aval.sharding_type, "spec", None)
        text += f"{{sharding={tuple(spec) if spec is not None else None}}}"
    if aval.weak_type != other.weak_type:
        text += f"{{weak_type={aval.weak_type}}}"
    return text


def _what_changed(new, old) -> str:
    return "/".join(_changes(new, old)) or "type"


def _changes(new, old) -> list[str]:
    """The fields of two avals that differ."""
    changes = []
    if new.shape != old.shape:
        changes.append("shape")
    if new.dtype != old.dtype:
        changes.append("dtype")
    if new.weak_type != old.weak_type:
        changes.append("weak type")
    if getattr(new, "sharding_type", None) != getattr(old, "sharding_type", None):
        changes.append("sharding")
    if getattr(new, "memory_space", None) != getattr(old, "memory_space", None):
        changes.append("memory space")
    return changes


def _static_names(jitted, static_key):
    """``(name, value)`` for each static argument of a key."""
    if not static_key:
        return []
    positional, keywords = static_key
    try:
        params = list(inspect.signature(jitted.fun).parameters)
    except (TypeError, ValueError):
        params = []
    named = [(params[i] if 0 <= i < len(params) else f"args[{i}]", v) for i, v in positional]
    return named + list(keywords)


def diff_keys(jitted, new, old, arg_names) -> tuple[int, int, list[str]]:
    """``(severity, number of differences, lines)`` explaining ``new`` against ``old``;
    keys are ``(in_tree, static_key, avals, x64[, placements])``."""
    new_tree, new_static, new_avals, new_x64 = new[:4]
    old_tree, old_static, old_avals, old_x64 = old[:4]
    if new_x64 != old_x64:
        # The key holds the trace context: enable_x64 first, then the other flags that
        # change tracing (jit_caches._TRACE_CONTEXT_FLAGS); name the ones that differ.
        pairs = (zip(_TRACE_CONTEXT_FLAGS, new_x64, old_x64) if type(new_x64) is tuple
                 and type(old_x64) is tuple else [("enable_x64", new_x64, old_x64)])
        lines = [f"  * config {name} differs: now {a} and before {b} (a config change "
                 "retraces every function)" for name, a, b in pairs if a != b]
        return _CONFIG, len(lines), lines
    if new_tree != old_tree:
        return _TREE, 1, ["different input pytree:"] + _tree_diff(new_tree, old_tree)
    if new_static != old_static:
        lines = ["different static arguments:"]
        old_named = dict(_static_names(jitted, old_static))
        count = 0
        for name, value in _static_names(jitted, new_static):
            if name not in old_named:
                lines.append(f"  * at static argument {name}, now {value!r} and before "
                             "not passed")
            elif old_named[name] != value or type(old_named[name]) is not type(value):
                lines.append(f"  * at static argument {name}, now {value!r} and before "
                             f"{old_named[name]!r}")
            else:
                continue
            count += 1
        return _STATIC, max(count, 1), lines
    if new_avals != old_avals:
        # The distance is the number of differing fields (shape, dtype, weak type, ...)
        # over the differing leaves: f32[4] is closer to i32[4] than to i32[3].
        lines, weak, fields = ["different input types:"], False, 0
        for i, (a, b) in enumerate(zip(new_avals, old_avals)):
            if a != b:
                name = arg_names[i] if i < len(arg_names) else f"args[{i}]"
                weak |= a.weak_type != b.weak_type
                fields += max(len(_changes(a, b)), 1)
                lines.append(f"  * at {name}, now {_aval_str(a, b)} and before "
                             f"{_aval_str(b, a)} ({_what_changed(a, b)} changed)")
        if weak:
            lines.append("  weak types come from Python scalars; pass e.g. "
                         "traxla.numpy.float32(x) to keep one type (see "
                         "https://docs.jax.dev/en/latest/type_promotion.html#weak-types)")
        return _TYPES, fields, lines
    if len(new) > 4 and len(old) > 4 and new[4] != old[4]:
        lines = ["different argument placements (shardings):"]
        for i, (a, b) in enumerate(zip(new[4], old[4])):
            if a != b:
                name = arg_names[i] if i < len(arg_names) else f"args[{i}]"
                lines.append(f"  * at {name}, now {a} and before {b} (sharding changed)")
        return _PLACEMENT, len(lines) - 1, lines
    return 9, 0, ["  cache miss explanation unavailable (the keys are equal)"]


def _tree_diff(new_tree, old_tree) -> list[str]:
    """Where two input trees differ, by argument path (a few places at most)."""
    lines: list[str] = []
    marker = _Leaf()
    try:
        new = tree_util.tree_unflatten(new_tree, [marker] * new_tree.num_leaves)
        old = tree_util.tree_unflatten(old_tree, [marker] * old_tree.num_leaves)
    except Exception:  # noqa: BLE001 - a custom node that cannot be rebuilt
        return [f"  * now {new_tree} and before {old_tree}"]

    def report(path, now, before, why):
        lines.append(f"  * at input path {_path_text(path)}, now {now} and before {before}, "
                     f"so {why}")

    def walk(a, b, path):
        if len(lines) >= 5:
            return
        if type(a) is not type(b):
            report(path, _kind(a), _kind(b), "the pytree structure changed")
        elif isinstance(a, dict):
            if sorted(a, key=repr) != sorted(b, key=repr):
                report(path, f"dict with keys {sorted(a, key=repr)}",
                       f"dict with keys {sorted(b, key=repr)}", "the dict keys changed")
            else:
                for k in sorted(a, key=repr):
                    walk(a[k], b[k], path + (tree_util.DictKey(k),))
        elif isinstance(a, (list, tuple)):
            if len(a) != len(b):
                report(path, f"{_kind(a)} of length {len(a)}", f"{_kind(b)} of length {len(b)}",
                       "the number of children changed")
            else:
                for i, (x, y) in enumerate(zip(a, b)):
                    walk(x, y, path + (tree_util.SequenceKey(i),))
        elif a is not marker and a != b:
            report(path, a, b, "the pytree node data changed")

    walk(new, old, ())
    return lines or [f"  * now {new_tree} and before {old_tree}"]


class _Leaf:
    def __repr__(self):
        return "*"


def _kind(x) -> str:
    return "a leaf" if isinstance(x, _Leaf) else "None" if x is None else type(x).__name__


def _path_text(path) -> str:
    """``args[0]['w']`` style: the top level of a jit key is ``(args, kwargs)``."""
    if not path:
        return "(args, kwargs)"
    head = {0: "args", 1: "kwargs"}.get(getattr(path[0], "idx", None), str(path[0]))
    return head + tree_util.keystr(tuple(path[1:]))


def explain_miss(level: str, jitted, key, cached_keys, arg_names) -> str:
    """The message for a miss of ``key`` at ``level`` ("TRACING" or "COMPILATION")."""
    lines = [f"{level} CACHE MISS at {call_site()}:",
             f"  for {function_location(jitted.fun)}"]
    cached_keys = [k for k in cached_keys if len(k) == len(key)]
    if not cached_keys:
        if level == "TRACING":
            lines.append("  never seen function with these jit options before (first trace)")
            if _seen_before(jitted.fun):
                lines.append("  but another function defined on the same line was traced "
                             "before; maybe the function is being re-defined repeatedly (a "
                             "lambda, closure or jit created inside a loop), which prevents "
                             "caching: define it once, outside the loop")
        else:
            lines.append("  first compilation by this jit object"
                         + (" (the traced jaxpr was reused)" if jitted._traced.get(key[:4])
                            else ""))
        return "\n".join(lines)
    diffs = sorted((diff_keys(jitted, key, old, arg_names) for old in cached_keys),
                   key=lambda d: (-d[0], d[1]))
    lines.append(f"  all {len(cached_keys)} previously seen cache keys differ. For the "
                 "closest previous key:")
    lines += ["  " + line for line in diffs[0][2]]
    return "\n".join(lines)


# (file, line) of the functions traced so far, and one live function of each: a new
# function from the same line means the definition is being re-run.
_defined_at: dict = {}


def _seen_before(fun) -> bool:
    inner = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(inner, "__code__", None)
    if code is None:
        return False
    where = (code.co_filename, code.co_firstlineno)
    previous = _defined_at.get(where)
    try:
        _defined_at[where] = weakref.ref(inner)
    except TypeError:
        return False
    if len(_defined_at) > 4096:  # bounded: forget the oldest
        _defined_at.pop(next(iter(_defined_at)))
    return previous is not None and previous() is not inner


def on_trace_miss(jitted, key, args, kwargs):
    """Called by ``jit`` before tracing: logs the explanation when asked to."""
    names = jitted._arg_names(args, kwargs)
    jitted._diag_arg_names = names  # for the retrace budget's message
    if config.read("explain_cache_misses"):
        logger.warning(explain_miss("TRACING", jitted, key, list(jitted._traced.keys()), names))


def on_compile_miss(jitted, key, args, kwargs):
    # A key the trace cache misses too is explained once, at the tracing level.
    if config.read("explain_cache_misses") and key[:4] in jitted._traced:
        logger.warning(explain_miss("COMPILATION", jitted, key, list(jitted._compiled.keys()),
                                    jitted._arg_names(args, kwargs)))


def count_trace(jitted, key):
    """Counts a trace and enforces the retrace budget: ``config.max_retraces`` (or the
    budget set by ``retrace_budget(f, n)``) traces after the first one."""
    jitted._diag_traces = getattr(jitted, "_diag_traces", 0) + 1
    budget = getattr(jitted, "_diag_budget", None)
    action = getattr(jitted, "_diag_budget_action", None)
    if budget is None:
        budget = config.read("max_retraces")
    if action is None:
        action = config.read("retrace_budget_action")
    retraces = jitted._diag_traces - 1
    if budget is None or retraces <= budget:
        return
    others = [k for k in jitted._traced if k != key]
    why = explain_miss("TRACING", jitted, key, others, getattr(jitted, "_diag_arg_names", ()))
    message = (f"jit({jitted.name}) has been traced {jitted._diag_traces} times, more than "
               f"its retrace budget allows ({budget} retraces). The last miss:\n{why}\n"
               "Give the changing argument a fixed shape/dtype, mark it static only if it "
               "takes few values, or raise the budget (traxla.diagnostics.retrace_budget).")
    if action == "raise":
        raise RetraceBudgetExceeded(message)
    warnings.warn(message, RetraceWarning, stacklevel=5)


def count_compile(jitted):
    jitted._diag_compiles = getattr(jitted, "_diag_compiles", 0) + 1
