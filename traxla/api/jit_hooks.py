"""The hooks ``jit`` calls on its slow path (cache misses only: a hit never gets here), and
behind ``jitted.cache_info()`` and ``Compiled.report()``.

Here they do nothing; ``traxla.diagnostics`` (imported by ``traxla/__init__``) installs
its own when it is imported: miss explanations, trace counting and the retrace budget,
unrolled-loop detection and re-rolling, compile records and reports. The api layer calls
them through this table, so that it never imports the libraries above it.
"""
from __future__ import annotations


def on_trace_miss(jitted, key, args, kwargs) -> None:
    """Before ``jitted`` traces for ``key``."""


def after_trace(jitted, key, result):
    """After the trace of ``key``: returns ``result``, ``(closed jaxpr, out_tree)``, or a
    replacement (a re-rolled jaxpr, which it also caches)."""
    return result


def on_compile_miss(jitted, key, args, kwargs) -> None:
    """Before ``jitted`` traces (or reuses a trace) and compiles for ``key``."""


def after_compile(jitted, closed, program, executable) -> None:
    """After ``jitted`` compiled ``closed`` (lowered as ``program``) into ``executable``."""


def cache_info(jitted):
    """``jitted.cache_info()``: its traces, compilations and cache sizes."""
    raise RuntimeError("cache_info needs traxla.diagnostics, which is not imported")


def compile_report(compiled):
    """``Compiled.report()``: where the compile time went, by source line."""
    raise RuntimeError("Compiled.report() needs traxla.diagnostics, which is not imported")


_HOOKS = ("on_trace_miss", "after_trace", "on_compile_miss", "after_compile", "cache_info",
          "compile_report")


def install(**hooks) -> None:
    """Replaces the named hooks (``traxla.diagnostics`` installs all of them)."""
    for name, hook in hooks.items():
        if name not in _HOOKS:
            raise TypeError(f"jit has no hook {name!r}; its hooks are {', '.join(_HOOKS)}")
        globals()[name] = hook
