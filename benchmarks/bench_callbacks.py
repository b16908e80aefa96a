"""Dispatch cost of jitted programs that call back to Python, traxla next to JAX.

    python benchmarks/bench_callbacks.py [--calls 5000] [--repeats 5] [--json out.json]

Rows (microseconds per call of an already-compiled program on a (4,) float32 array,
median of ``--repeats``; each call waits for its result, since a callback program is
only done when the host function has run):

  plain          ``jit(lambda x: x + 1.0)``: no callback, the baseline;
  pure_callback  ``x + pure_callback(identity, x)``;
  debug.callback ``debug.callback(no_op, x); x + 1``;
  io ordered     ``io_callback(identity, x, ordered=True) + 1``.

Also reported: the resident-memory growth (KiB) over the traxla calls of each row (a leak
shows as growth proportional to ``--calls``). Runs in well under a minute on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import traxla  # noqa: E402
import jax  # noqa: E402
from jax.experimental import io_callback as jax_io_callback  # noqa: E402
from traxla.experimental import io_callback as traxla_io_callback  # noqa: E402


def _identity(x):
    return np.asarray(x)


def _no_op(x):
    return None


def programs(lib, io_callback):
    spec = jax.ShapeDtypeStruct((4,), np.float32)  # any .shape/.dtype object will do
    return {
        "plain": lib.jit(lambda x: x + 1.0),
        "pure_callback": lib.jit(lambda x: x + lib.pure_callback(_identity, spec, x)),
        "debug.callback": lib.jit(lambda x: (lib.debug.callback(_no_op, x), x + 1.0)[1]),
        "io ordered": lib.jit(lambda x: io_callback(_identity, spec, x, ordered=True) + 1.0),
    }


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def time_calls(fn, x, calls):
    start = time.perf_counter()
    for _ in range(calls):
        y = fn(x)
        y.block_until_ready()
    return (time.perf_counter() - start) / calls * 1e6


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    x_np = np.arange(4, dtype=np.float32)
    libs = {"traxla": (programs(traxla, traxla_io_callback), traxla.device_put(x_np)),
            "jax": (programs(jax, jax_io_callback), jax.device_put(x_np))}
    for progs, x in libs.values():  # compile and warm up
        for fn in progs.values():
            for _ in range(50):
                fn(x).block_until_ready()
    results = {}
    for row in libs["traxla"][0]:
        samples = {"traxla": [], "jax": []}
        rss_before = rss_kib()
        for r in range(args.repeats):
            order = ("traxla", "jax") if r % 2 == 0 else ("jax", "traxla")
            for name in order:
                progs, x = libs[name]
                samples[name].append(time_calls(progs[row], x, args.calls))
        growth = rss_kib() - rss_before
        t, j = statistics.median(samples["traxla"]), statistics.median(samples["jax"])
        results[row] = {"traxla_us": t, "jax_us": j, "ratio": t / j, "rss_growth_kib": growth,
                        "samples": samples}
    print(f"{'row':<16}{'traxla us':>11}{'jax us':>9}{'traxla/jax':>12}{'RSS +KiB':>10}")
    for row, r in results.items():
        print(f"{row:<16}{r['traxla_us']:>11.1f}{r['jax_us']:>9.1f}{r['ratio']:>12.2f}"
              f"{r['rss_growth_kib']:>10d}")
    print(f"({args.calls} calls x {args.repeats} repeats per library and row; RSS growth "
          "covers both libraries' calls of the row)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"calls": args.calls, "repeats": args.repeats, "results": results}, f,
                      indent=1)


if __name__ == "__main__":
    main()
