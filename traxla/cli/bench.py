"""Measuring what code costs: the scan-vs-unrolled recurrence of the article.

The measurement is written against a *framework* (an object with ``jit``,
``numpy`` and ``lax`` attributes), so the same code times traxla and, from
``benchmarks/``, JAX in the same run. This module never imports ``jax``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import math
import sys
import warnings

import numpy as np

import traxla
from traxla.diagnostics.unrolled import (UnrolledLoopWarning, extrapolated_compile_seconds,
                                         record_compile)


@dataclass
class Framework:
    name: str
    jit: object
    numpy: object
    lax: object


def traxla_framework() -> Framework:
    return Framework("traxla", traxla.jit, traxla.numpy, traxla.lax)


@dataclass
class Row:
    framework: str
    mode: str            # "python for" or "lax.scan"
    steps: int
    eqns: int = 0        # top-level equations of the jaxpr
    trace_s: float = float("nan")
    lower_s: float = float("nan")
    compile_s: float = float("nan")
    run_s: float = float("nan")
    note: str = ""
    extra: dict = field(default_factory=dict)


def recurrence(fw: Framework, mode: str, steps: int):
    """A fresh ``h = tanh(W @ h)`` function (fresh, so no tracing cache is hit)."""
    jnp, lax = fw.numpy, fw.lax
    if mode == "python for":
        def f(W, h):
            for _ in range(steps):
                h = jnp.tanh(W @ h)
            return h
    else:
        def f(W, h):
            def body(h, _):
                return jnp.tanh(W @ h), None
            return lax.scan(body, h, None, length=steps)[0]
    return f


def measure(fw: Framework, mode: str, steps: int, *, skip_compile: bool = False,
            runs: int = 20, note: str = "") -> Row:
    rng = np.random.default_rng(0)
    W = (rng.standard_normal((32, 32)) / 8).astype(np.float32)
    h = rng.standard_normal(32).astype(np.float32)
    row = Row(fw.name, mode, steps)
    jitted = fw.jit(recurrence(fw, mode, steps))
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # the unrolled loop is the point here
        warnings.simplefilter("ignore", UnrolledLoopWarning)
        traced = jitted.trace(W, h)
    row.trace_s = time.perf_counter() - t0
    row.eqns = len(traced.jaxpr.eqns)
    t0 = time.perf_counter()
    lowered = traced.lower()
    row.lower_s = time.perf_counter() - t0
    row.extra["stablehlo_lines"] = lowered.as_text().count("\n")
    if skip_compile:
        row.note = note or "compile skipped (over the time budget)"
        return row
    t0 = time.perf_counter()
    compiled = lowered.compile()
    row.compile_s = time.perf_counter() - t0
    if fw.name == "traxla":  # calibrates traxla's own unrolled-loop predictions
        record_compile(row.eqns, row.compile_s)
    compiled(W, h).block_until_ready()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        compiled(W, h).block_until_ready()
        times.append(time.perf_counter() - t0)
    row.run_s = float(np.median(times))
    return row


# A small unrolled compile measured first calibrates the predictions (about 0.1 s quiet).
CALIBRATION_STEPS = 50
# A compile predicted above this many seconds prints a progress line first.
PROGRESS_S = 5.0


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def sweep(frameworks, steps_list, compile_cap_s: float | None = 30.0, log=print,
          progress=_progress):
    """Rows for every framework, mode and length. With a budget (``compile_cap_s``), an
    unrolled compile predicted above it is skipped with a note: the prediction scales
    XLA's compile-time model (``traxla.diagnostics.unrolled``) by the largest unrolled
    compile measured so far with the same framework (first a small calibration compile),
    so it follows this machine and its load. ``None``: no budget, everything compiles.
    Compiles predicted to take more than ``PROGRESS_S`` print a progress line first."""
    rows = []
    for fw in frameworks:
        for mode in ("python for", "lax.scan"):
            measured = []  # (equations, compile seconds) of this framework's unrolled loops
            for steps in steps_list:
                predicted = None
                if mode == "python for":
                    if not measured and compile_cap_s is not None and steps > CALIBRATION_STEPS:
                        calib = measure(fw, mode, CALIBRATION_STEPS, runs=1)
                        measured.append((calib.eqns, calib.compile_s))
                    if measured:
                        predicted = extrapolated_compile_seconds(2 * steps, measured)
                skip = (compile_cap_s is not None and predicted is not None
                        and predicted > compile_cap_s)
                note = (f"compile skipped: predicted ~{predicted:.0f} s, over the "
                        f"{compile_cap_s:g} s budget; --no-budget runs it" if skip else "")
                if not skip and predicted is not None and predicted > PROGRESS_S:
                    progress(f"... {fw.name}: compiling the {steps}-step unrolled loop, "
                             f"predicted ~{predicted:.0f} s")
                row = measure(fw, mode, steps, skip_compile=skip, note=note)
                if mode == "python for" and not skip:
                    measured.append((row.eqns, row.compile_s))
                rows.append(row)
                log(format_row(row))
    return rows


def _predicted_compile(history, steps):
    """Extrapolates compile time with a power law fitted to the last two lengths
    (linear from a single point)."""
    if len(history) == 1:
        n1, c1 = history[-1]
        return c1 * steps / n1
    (n0, c0), (n1, c1) = history[-2:]
    k = max(1.0, math.log(max(c1, 1e-9) / max(c0, 1e-9)) / math.log(n1 / n0))
    return c1 * (steps / n1) ** k


HEADER = (f"{'framework':10s} {'mode':11s} {'steps':>6s} {'top eqns':>9s} {'trace s':>9s} "
          f"{'lower s':>9s} {'compile s':>10s} {'run s':>10s}")


def format_row(r: Row) -> str:
    def num(x, fmt):
        return f"{x:{fmt}}" if x == x else "-".rjust(int(fmt.split('.')[0]))
    return (f"{r.framework:10s} {r.mode:11s} {r.steps:6d} {r.eqns:9d} {num(r.trace_s, '9.4f')} "
            f"{num(r.lower_s, '9.4f')} {num(r.compile_s, '10.3f')} {num(r.run_s, '10.6f')}"
            + (f"  ({r.note})" if r.note else ""))


def main(steps_list=(100, 300, 1000, 3000), compile_cap_s: float | None = 30.0):
    print(HEADER)
    return sweep([traxla_framework()], steps_list, compile_cap_s)


def plot_rows(rows, path) -> bool:
    """Compile seconds against steps, per framework and mode, on log axes; without
    matplotlib (an optional extra) it says so and draws nothing."""
    try:
        import matplotlib  # optional: matplotlib is an optional dependency
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # optional: matplotlib is an optional dependency
    except ImportError:
        print(f"matplotlib is not installed: no plot written to {path} "
              "(pip install matplotlib); the table above has the numbers")
        return False
    fig, ax = plt.subplots(figsize=(6, 4))
    for fw in sorted({r.framework for r in rows}):
        for mode in ("python for", "lax.scan"):
            pts = [(r.steps, r.compile_s) for r in rows
                   if r.framework == fw and r.mode == mode and r.compile_s == r.compile_s]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"{fw}: {mode}")
    ax.set_xlabel("steps")
    ax.set_ylabel("XLA compile s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"plot written to {path}")
    return True
