"""What ``jit`` calls into on its slow path (misses only: a cache hit never gets here):
miss explanations, trace counting and the retrace budget, unrolled-loop detection and
re-rolling after a trace, and the compile record behind ``last_compile_report``.
Installed into ``jit``'s hook table (``traxla/api/jit_hooks.py``) on import."""
from __future__ import annotations

import logging
import os
import time
from typing import NamedTuple

from traxla.api import jit_hooks
from traxla.api.jit_caches import _traces_by_function
from traxla.diagnostics import cache_misses
from traxla.diagnostics.report import build_report, report_of_compiled
from traxla.diagnostics.reroll import reroll_jaxpr
from traxla.diagnostics.unrolled import (MIN_EQUATIONS, find_unrolled_loops,
                                         record_compile, warn as warn_loop)
from traxla.ir.config import config

_flags = config.current  # the calling thread's option values (read once a trace)

logger = logging.getLogger("traxla")


class CacheInfo(NamedTuple):
    """Per jitted function: how often it traced and compiled, and what its caches hold
    (``traces``/``compiles`` count misses; a hit counts nothing, so hits stay fast)."""
    traces: int
    compiles: int
    trace_cache_size: int
    compile_cache_size: int


def cache_info(jitted) -> CacheInfo:
    return CacheInfo(getattr(jitted, "_diag_traces", 0), getattr(jitted, "_diag_compiles", 0),
                     len(jitted._traced), len(jitted._compiled))


def on_trace_miss(jitted, key, args, kwargs):
    cache_misses.on_trace_miss(jitted, key, args, kwargs)
    jitted._diag_trace_start = time.perf_counter()


def on_compile_miss(jitted, key, args, kwargs):
    cache_misses.on_compile_miss(jitted, key, args, kwargs)
    jitted._diag_compile_start = time.perf_counter()
    jitted._diag_pending_trace_s = 0.0


def after_trace(jitted, key, result):
    """Counts the trace (retrace budget), then looks for unrolled loops: re-rolls them
    when asked to (the re-rolled jaxpr replaces the cached one), otherwise warns.
    Returns ``(closed jaxpr, out_tree)``."""
    try:
        cache_misses.count_trace(jitted, key)
    except cache_misses.RetraceBudgetExceeded:
        jitted._traced.pop(key, None)  # over budget: every such call raises
        raise
    closed, out_tree = result
    rolled = _loops(jitted, key, closed)
    if rolled is not closed:
        result = jitted._traced[key] = (rolled, out_tree)
    jitted._diag_pending_trace_s = (getattr(jitted, "_diag_pending_trace_s", 0.0)
                                    + time.perf_counter() - jitted._diag_trace_start)
    return result


def _loops(jitted, key, closed):
    reroll = _flags.reroll_loops
    warn = _flags.warn_unrolled_loops
    if len(closed.jaxpr.eqns) < MIN_EQUATIONS or not (reroll or warn):
        return closed
    # the warning alone needs only the quick scan; re-rolling checks every block
    loops = find_unrolled_loops(closed, min_repeats=config.read("unrolled_loop_min_repeats"),
                                verify=bool(reroll))
    if not loops:
        return closed
    done = []
    if reroll:
        closed, done = reroll_jaxpr(closed, loops)
        for loop in done:
            logger.info("re-rolled into a scan: %d repetitions of a %d-equation block from %s",
                        loop.repeats, loop.block_len, loop.source)
    if warn:
        for loop in loops:
            if all(loop is not d for d in done):
                _warn(loop)
    return closed


def _warn(loop):
    if not _in_installed_package(loop.file):
        warn_loop(loop)


_INSTALLED = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def _in_installed_package(path: str) -> bool:
    """A loop in an installed library's own code (diffrax's 100-step ``prevbefore`` loop):
    its user cannot change it, so no warning; ``find_unrolled_loops`` still finds it."""
    return any(part in (path or "") for part in _INSTALLED)


def after_compile(jitted, closed, program, executable):
    cache_misses.count_compile(jitted)
    total = time.perf_counter() - getattr(jitted, "_diag_compile_start", time.perf_counter())
    trace_s = getattr(jitted, "_diag_pending_trace_s", 0.0)
    compile_s = executable.compile_seconds
    lower_s = max(total - trace_s - compile_s, 0.0)
    jitted._diag_last_compile = (closed, program.module, trace_s, lower_s, compile_s)
    record_compile(len(closed.jaxpr.eqns), compile_s)  # calibrates loop compile predictions
    if config.read("log_compiles") and total >= config.read("compile_report_seconds"):
        logger.warning("%s", build_report(jitted.name, closed, program.module, trace_s,
                                          lower_s, compile_s))


def _on_config_update(name, value):
    """Turning re-rolling on or off drops the traced jaxprs (not the executables), so
    that the next trace of every function follows the new setting."""
    if name == "reroll_loops" and bool(value) != bool(config.read("reroll_loops")):
        for per_options in list(_traces_by_function.values()):
            for traces in per_options.values():
                traces.clear()


config.on_update(_on_config_update)
jit_hooks.install(on_trace_miss=on_trace_miss, after_trace=after_trace,
                  on_compile_miss=on_compile_miss, after_compile=after_compile,
                  cache_info=cache_info, compile_report=report_of_compiled)
