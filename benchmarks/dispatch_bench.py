"""Dispatch of cached jitted calls, traxla next to JAX in the same process (issue #43,
acceptance item 4: every ratio traxla/JAX <= 0.95, median of 5 interleaved runs).

    PYTHONPATH=. python benchmarks/dispatch_bench.py [--calls 10000] [--repeats 5]
        [--only one,two,tree,static] [--modes sync,async] [--check] [--limit 0.95]
        [--platform cpu|tpu|...] [--clock wall|thread] [--chunks K] [--json out.json]

Programs (already compiled, float32 (8,) device arrays, committed to nothing):
  one     ``jit(lambda x: x + 1.0)(x)``
  two     ``jit(lambda x, y: x * y + 1.0)(x, y)``
  tree    ``jit(lambda p: p["a"] * p["b"] + p["c"])({"a": x, "b": y, "c": z})``
  static  ``jit(lambda x, n: x * n + 1.0, static_argnums=1)(x, 3)``
Modes:
  sync    ``for _ in range(N): f(...).block_until_ready()``
  async   N calls without blocking, then one ``block_until_ready()`` on the last result

Each repetition times both libraries back to back (traxla first on even repetitions, JAX
first on odd ones) on the wall clock, after a warm-up. A figure is the median over the
repetitions of microseconds per call (``--clock thread``: the calling thread's CPU time, which
leaves out time other processes take and work on other threads); the ratio is traxla's median over JAX's (below 1:
traxla is faster); the spread is the min..max of the per-repetition ratios.
``--chunks K`` splits each run into K slices that alternate between the libraries (less
exposed to changes of load; in async mode each slice then blocks on its last result).
``--check`` exits 1 when a ratio is above ``--limit`` (default 0.95).

Platform: JAX's default is pinned to the CPU (``JAX_PLATFORMS=cpu``) unless ``--platform``
(or ``JAX_PLATFORMS``) says otherwise; traxla follows the same choice through
``jax_platforms``. Off the CPU (``--platform tpu``) the measurement runs in a child process
that holds the accelerator with both libraries; if the two cannot share it in one process,
one child per library runs after the other, and the output says the figures are then not
interleaved (``--separate`` goes there directly). ``--workers`` uses child processes on the
CPU too. It needs no network and
takes well under a minute (about 30 s on 2 busy cores).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=None,
                   help="calls per run (default 10000; off the CPU 2000: a call to a TPU "
                        "costs ~0.5 ms synchronously there, 10000 would not fit the workers' "
                        "time limit)")
    p.add_argument("--repeats", type=int, default=None, help="runs (default 5; off the CPU 3)")
    p.add_argument("--only", default="one,two,tree,static")
    p.add_argument("--modes", default="sync,async")
    p.add_argument("--check", action="store_true", help="exit 1 if a ratio is above --limit")
    p.add_argument("--limit", type=float, default=0.95)
    p.add_argument("--platform", default=None, help="cpu (default), tpu, cuda...")
    p.add_argument("--json", default=None)
    p.add_argument("--chunks", type=int, default=1,
                   help="split each run into this many slices, the libraries alternating "
                        "slice by slice (steadier on a busy machine; async: a block per slice)")
    p.add_argument("--clock", choices=("wall", "thread"), default="wall",
                   help="thread: the calling thread's CPU time (steadier on a busy machine)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--workers", action="store_true", help="measure in child processes")
    p.add_argument("--separate", action="store_true",
                   help="one child process per library, one after the other (not interleaved)")
    args = p.parse_args(argv)
    off_cpu = (args.platform or os.environ.get("JAX_PLATFORMS", "cpu")).split(",")[0] != "cpu"
    if args.calls is None:
        args.calls = 2000 if off_cpu else 10000
    if args.repeats is None:
        args.repeats = 3 if off_cpu else 5
    return args


ARGS = parse_args()
if ARGS.platform:
    os.environ["JAX_PLATFORMS"] = ARGS.platform
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import traxla  # noqa: E402
import jax  # noqa: E402

traxla.config.update("jax_platforms", os.environ["JAX_PLATFORMS"])

PROGRAMS = ("one", "two", "tree", "static")
WORKER_TIMEOUT_S = 120
MODES = ("sync", "async")


def make_programs(lib):
    """name -> (jitted function, argument tuple) for one library."""
    rng = np.random.RandomState(0)
    x, y, z = (lib.device_put(rng.randn(8).astype(np.float32)) for _ in range(3))
    return {
        "one": (lib.jit(lambda x: x + 1.0), (x,)),
        "two": (lib.jit(lambda x, y: x * y + 1.0), (x, y)),
        "tree": (lib.jit(lambda p: p["a"] * p["b"] + p["c"]), ({"a": x, "b": y, "c": z},)),
        "static": (lib.jit(lambda x, n: x * n + 1.0, static_argnums=1), (x, 3)),
    }


def loop_sync(f, args, calls):
    for _ in range(calls):
        f(*args).block_until_ready()


def loop_async(f, args, calls):
    out = None
    for _ in range(calls):
        out = f(*args)
    out.block_until_ready()


LOOPS = {"sync": loop_sync, "async": loop_async}
CLOCK = [time.perf_counter]  # (main: pick_clock)


def clock_step(clock, spins=200000):
    """The smallest step seen of ``clock`` (seconds): some machines' thread CPU clock
    advances by whole scheduler ticks (1-10 ms), too coarse for a run of ~50 ms."""
    step, last = float("inf"), clock()
    for _ in range(spins):
        now = clock()
        if now != last:
            step, last = min(step, now - last), now
            if step < 1e-5:
                break
    return step


def pick_clock():
    """``--clock``'s clock; the wall clock (with a note) when the thread clock is coarse."""
    if ARGS.clock != "thread":
        return time.perf_counter
    step = clock_step(time.thread_time)
    if step > 1e-4:
        print(f"note: the thread clock advances in steps of {step * 1e3:.1f} ms here, too "
              "coarse; timing with the wall clock instead", file=sys.stderr)
        ARGS.clock = "wall"
        return time.perf_counter
    return time.thread_time


def timed(loop, f, args, calls):
    clock = CLOCK[0]
    gc.collect()
    start = clock()
    loop(f, args, calls)
    return clock() - start


def measure(lib_names, names, modes):
    """Per (program, mode), per library, microseconds per call of each repetition, the
    libraries in ``lib_names`` interleaved; and each library's platform."""
    modules = {"traxla": traxla, "jax": jax}
    libs = {lib: make_programs(modules[lib]) for lib in lib_names}
    platforms = {lib: modules[lib].devices()[0].platform for lib in lib_names}
    outs = {}
    for name in names:  # compile, warm up, and the same results from both
        for lib, progs in libs.items():
            f, args = progs[name]
            for _ in range(max(500, ARGS.calls // 10)):
                out = f(*args).block_until_ready()
            outs[lib, name] = np.asarray(out).tolist()
    samples = {f"{n}/{m}": {lib: [] for lib in lib_names} for n in names for m in modes}
    for rep in range(ARGS.repeats):
        order = list(lib_names) if rep % 2 == 0 else list(lib_names)[::-1]
        for name in names:
            for mode in modes:
                seconds = dict.fromkeys(order, 0.0)
                for part in range(ARGS.chunks):  # (--chunks: slices alternate libraries)
                    calls = ARGS.calls // ARGS.chunks + (part < ARGS.calls % ARGS.chunks)
                    for lib in order:
                        f, args = libs[lib][name]
                        seconds[lib] += timed(LOOPS[mode], f, args, calls)
                for lib in order:
                    samples[f"{name}/{mode}"][lib].append(seconds[lib] / ARGS.calls * 1e6)
    return dict(samples=samples, platforms=platforms,
                outputs={f"{lib}/{name}": v for (lib, name), v in outs.items()})


def in_workers(names, modes):
    """Off the CPU: the measurement in a child process (this one never holds the
    accelerator), both libraries in it; where the two cannot hold the accelerator in one
    process, one child per library, one after the other (then not interleaved)."""
    def child(libs):
        argv = [sys.executable, os.path.abspath(__file__), "--worker", libs,
                "--calls", str(ARGS.calls), "--repeats", str(ARGS.repeats),
                "--only", ",".join(names), "--modes", ",".join(modes), "--clock", ARGS.clock,
                "--chunks", str(ARGS.chunks)]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ),
                                  timeout=WORKER_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            print(f"worker {libs} did not finish in {WORKER_TIMEOUT_S} s")
            return None
        if done.returncode != 0 or not done.stdout.strip():
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
            print(f"worker {libs} failed (exit {done.returncode}):\n{tail}")
            return None
        return json.loads(done.stdout.strip().splitlines()[-1])
    if not ARGS.separate:
        got = child("traxla,jax")
        if got is not None:
            return got, True
    parts = [child("traxla"), child("jax")]
    if None in parts:
        sys.exit("the measurement failed")
    merged = dict(samples={}, platforms={}, outputs={})
    for part in parts:
        for key in ("platforms", "outputs"):
            merged[key].update(part[key])
        for row, per_lib in part["samples"].items():
            merged["samples"].setdefault(row, {}).update(per_lib)
    return merged, False


def main():
    if ARGS.chunks < 1 or ARGS.calls < ARGS.chunks:
        sys.exit("--chunks must be at least 1 and at most --calls")
    names = [n for n in ARGS.only.split(",") if n]
    modes = [m for m in ARGS.modes.split(",") if m]
    for n in names:
        if n not in PROGRAMS:
            sys.exit(f"unknown program {n!r}; known: {', '.join(PROGRAMS)}")
    for m in modes:
        if m not in MODES:
            sys.exit(f"unknown mode {m!r}; known: {', '.join(MODES)}")
    CLOCK[0] = pick_clock()
    if ARGS.worker:
        print(json.dumps(measure(ARGS.worker.split(","), names, modes)))
        return 0
    if os.environ["JAX_PLATFORMS"] == "cpu" and not (ARGS.workers or ARGS.separate):
        got, interleaved = measure(("traxla", "jax"), names, modes), True
    else:
        got, interleaved = in_workers(names, modes)
    samples, platforms = got["samples"], got["platforms"]
    for name in names:
        t, j = got["outputs"][f"traxla/{name}"], got["outputs"][f"jax/{name}"]
        np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-6, err_msg=name)
    how = ("interleaved" if interleaved else
           "NOT interleaved: one process per library, one after the other")
    print(f"dispatch of cached calls: {ARGS.calls} calls, median of {ARGS.repeats} runs "
          f"({how}, {ARGS.clock} clock, {ARGS.chunks} slice(s) a run); traxla on {platforms['traxla']}, JAX on {platforms['jax']} "
          f"(jax {jax.__version__})")
    print(f"{'program':<8} {'mode':<6} {'traxla us':>10} {'jax us':>10} {'ratio':>7}  spread")
    results, worst = [], 0.0
    for row, s in samples.items():
        name, mode = row.split("/")
        t, j = statistics.median(s["traxla"]), statistics.median(s["jax"])
        ratios = [a / b for a, b in zip(s["traxla"], s["jax"])]
        ratio = t / j
        worst = max(worst, ratio)
        flag = "  > limit" if ratio > ARGS.limit else ""
        print(f"{name:<8} {mode:<6} {t:>10.2f} {j:>10.2f} {ratio:>7.3f}  "
              f"{min(ratios):.3f}..{max(ratios):.3f}{flag}")
        results.append(dict(program=name, mode=mode, traxla_us=t, jax_us=j, ratio=ratio,
                            ratios=ratios, traxla_samples=s["traxla"], jax_samples=s["jax"]))
    print(f"worst ratio {worst:.3f} (limit {ARGS.limit})")
    if ARGS.json:
        with open(ARGS.json, "w") as fh:
            json.dump(dict(calls=ARGS.calls, repeats=ARGS.repeats, platforms=platforms,
                           interleaved=interleaved, limit=ARGS.limit, results=results), fh,
                      indent=1)
    if ARGS.check and worst > ARGS.limit:
        print("FAIL: a ratio is above the limit")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
