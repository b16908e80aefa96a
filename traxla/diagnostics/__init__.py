"""``traxla.diagnostics``: making the costs of tracing visible, and fixing the worst.

- cache-miss explanations: ``config.update("explain_cache_misses", True)`` logs why a
  jitted function traced or compiled again (which argument path, what changed);
- ``cache_info(f)`` (also ``f.cache_info()``) and a retrace budget
  (``config.update("max_retraces", n)`` or ``retrace_budget(f, n, action="raise")``);
- compile reports: ``jit(f).lower(...).compile().report()`` / ``last_compile_report(f)``,
  logged with ``log_compiles`` above ``compile_report_seconds``;
- the unrolled-loop detector (``find_unrolled_loops``, an ``UnrolledLoopWarning`` on by
  default) and opt-in re-rolling into ``scan`` (``reroll(f)``, ``reroll_loops``).
"""
from __future__ import annotations

from traxla.diagnostics.cache_misses import RetraceBudgetExceeded, RetraceWarning, diff_keys, explain_miss
from traxla.diagnostics import hooks
from traxla.diagnostics.hooks import CacheInfo
from traxla.diagnostics.reroll import reroll, reroll_jaxpr
from traxla.diagnostics.report import CompileReport, LineCost, build_report, last_compile_report
from traxla.diagnostics.unrolled import (UnrolledLoop, UnrolledLoopWarning, find_unrolled_loops,
                       predicted_compile_seconds)


def cache_info(jitted) -> CacheInfo:
    """Traces, compilations and cache sizes of a ``jit``-wrapped function."""
    return hooks.cache_info(jitted)


def retrace_budget(jitted, max_retraces: int | None, action: str = "warn"):
    """Allows ``jitted`` at most ``max_retraces`` traces after its first; beyond that
    ``action`` is "warn" (a RetraceWarning) or "raise" (RetraceBudgetExceeded).
    Returns ``jitted``, so it can wrap: ``f = retrace_budget(jit(f), 2)``."""
    if action not in ("warn", "raise"):
        raise ValueError(f"retrace_budget action must be 'warn' or 'raise', got {action!r}")
    if not hasattr(jitted, "_traced"):
        raise TypeError(f"retrace_budget expects a function wrapped by traxla.jit, got "
                        f"{jitted!r}")
    jitted._diag_budget = max_retraces
    jitted._diag_budget_action = action
    return jitted


__all__ = ["CacheInfo", "CompileReport", "LineCost", "RetraceBudgetExceeded",
           "RetraceWarning", "UnrolledLoop", "UnrolledLoopWarning", "build_report",
           "cache_info", "diff_keys", "explain_miss", "find_unrolled_loops",
           "last_compile_report", "predicted_compile_seconds", "reroll", "reroll_jaxpr",
           "retrace_budget"]
