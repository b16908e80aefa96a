"""The article's table: a 32x32 ``h = tanh(W @ h)`` recurrence written as a Python
``for`` loop (unrolled into the jaxpr) and as ``lax.scan`` (one equation), for a
sweep of lengths, with traxla and JAX measured side by side in the same run.

    python benchmarks/scan_vs_unrolled.py [--steps 100 300 1000 3000] [--cap 30 | --no-budget]
                                          [--png out.png]

Columns: top-level jaxpr equations, trace, lowering, XLA compile and run seconds.
An unrolled compile predicted to exceed ``--cap`` seconds is skipped with a note (the
prediction is calibrated on this run's measured compiles; ``--no-budget`` compiles all).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from traxla.cli.bench import HEADER, Framework, sweep, traxla_framework  # noqa: E402


def jax_framework():
    import jax
    import jax.numpy as jnp
    from jax import lax
    return Framework("jax", jax.jit, jnp, lax)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 300, 1000, 3000])
    parser.add_argument("--cap", type=float, default=30.0, help="skip unrolled compiles predicted above this (s)")
    parser.add_argument("--no-budget", action="store_true", help="compile every length, however long")
    parser.add_argument("--no-jax", action="store_true")
    parser.add_argument("--json", help="write the rows as JSON here")
    parser.add_argument("--png", help="plot compile seconds against steps (needs matplotlib)")
    args = parser.parse_args(argv)
    frameworks = [traxla_framework()] + ([] if args.no_jax else [jax_framework()])
    start = time.perf_counter()
    print(HEADER)
    rows = sweep(frameworks, args.steps, None if args.no_budget else args.cap)
    print(f"\ntotal {time.perf_counter() - start:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump([r.__dict__ for r in rows], fh, indent=1)
    if args.png:
        _plot(rows, args.png)
    return rows


def _plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for fw in sorted({r.framework for r in rows}):
        for mode in ("python for", "lax.scan"):
            pts = [(r.steps, r.compile_s) for r in rows
                   if r.framework == fw and r.mode == mode and r.compile_s == r.compile_s]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"{fw}: {mode}")
    ax.set_xlabel("steps"); ax.set_ylabel("XLA compile s"); ax.set_xscale("log"); ax.set_yscale("log")
    ax.legend(); fig.tight_layout(); fig.savefig(path)
    print(f"plot written to {path}")


if __name__ == "__main__":
    main()
