"""Regression guard for tracing and lowering: traxla/JAX ratios against recorded figures.

    python benchmarks/regression_guard.py             # check (about 1-2 min on 2 busy cores)
    python benchmarks/regression_guard.py --record    # measure and write the figures
    python benchmarks/regression_guard.py --only recurrence,mlp_step --repeats 9

For each program, ``jit(f).trace(*args)`` and then ``.lower()`` are timed for traxla and
JAX in the same process, alternating (traxla first on even repetitions), each repetition
on a fresh function object so that neither library answers from a cache; a small program
is traced/lowered several times per sample. The figure is the ratio of the two libraries'
fastest samples over ``--repeats`` (the medians of per-repetition ratios are printed
too; the default clock is the thread's CPU time, steadier on a shared machine). A ratio
more than ``--tolerance`` (10%) above the recorded one in ``benchmarks/regression_guard.json``
is measured again; still over in both runs, it is printed loudly
and the script exits 1. It is not a CI test (timings); run it before committing work on
the tracer or lowering. ``--record`` rewrites the JSON with the worse figure of two runs.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import statistics
import sys
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "tests"))

import numpy as np  # noqa: E402

RECORD = pathlib.Path(__file__).with_name("regression_guard.json")
CLOCKS = {"thread": time.thread_time, "wall": time.perf_counter}


# -- the programs: make(lib, jnp) -> (fresh function, args) ---------------------------------

def recurrence(m, np_):
    """The issue's 4,000-equation unrolled recurrence ``x = x * 0.9 + sin(x)``."""
    def f(x):
        for _ in range(1334):
            x = x * 0.9 + np_.sin(x)
        return x
    return f, (np.linspace(-1, 1, 8, dtype=np.float32),)


def tanh_matvec(m, np_):
    """bench_vs_jax's 1,000-step ``h = tanh(W @ h)`` (2,000 equations)."""
    w = (np.random.RandomState(0).randn(32, 32) / np.sqrt(32)).astype(np.float32)

    def f(w, h):
        for _ in range(1000):
            h = np_.tanh(w @ h)
        return h
    return f, (w, np.linspace(-1, 1, 32, dtype=np.float32))


def mixed(m, np_):
    """bench_vs_jax's jnp-heavy step (weak scalars, ``where``, softmax, mean), 200 steps."""
    w = (np.random.RandomState(0).randn(32, 32) / np.sqrt(32)).astype(np.float32)

    def f(w, h):
        for _ in range(200):
            z = w @ h * 0.5 + 0.1
            z = np_.where(z > 0, z, 0.01 * z)
            e = np_.exp(z - np_.max(z))
            h = e / np_.sum(e) - np_.mean(h) ** 2
        return h
    return f, (w, np.linspace(-1, 1, 32, dtype=np.float32))


def mlp_step(m, np_):
    """examples/mlp_training.py's update: grad of an MLP's squared error, SGD."""
    rng = np.random.RandomState(1)
    params = {"w1": rng.randn(8, 32).astype(np.float32), "b1": np.zeros(32, np.float32),
              "w2": rng.randn(32, 1).astype(np.float32), "b2": np.zeros(1, np.float32)}
    x, y = rng.randn(64, 8).astype(np.float32), rng.randn(64, 1).astype(np.float32)

    def loss(p, x, y):
        hidden = np_.tanh(x @ p["w1"] + p["b1"])
        return np_.mean((hidden @ p["w2"] + p["b2"] - y) ** 2)

    def update(p, x, y):
        grads = m.grad(loss)(p, x, y)
        return m.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), loss(p, x, y)
    return update, (params, x, y)


_CNN = {}


def cnn_step(m, np_):
    """examples/cnn.py's jitted SGD update (conv, pool, dense; grad), its ``update``'s
    Python function (the example's own jit unwrapped: a fresh jit each time)."""
    from test_examples_cnn import _SOURCE, _load, jax_source
    name = m.__name__
    if name not in _CNN:
        _CNN[name] = (_load(_SOURCE, "cnn_traxla") if name == "traxla"
                      else _load(jax_source(), "cnn_jax"))
    mod = _CNN[name]
    params = mod.init_params()
    images = np.random.RandomState(0).rand(8, 28, 28, 1).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[np.arange(8) % 10]

    def update(params, batch):
        grads = m.grad(mod.loss)(params, batch)
        return m.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, grads)
    return update, (params, (images, labels))


def scan_loop(m, np_):
    """A ``lax.scan`` over 16 steps of a small RNN cell with a ``fori_loop`` inside, and
    its gradient."""
    w = (np.random.RandomState(0).randn(16, 16) / 4).astype(np.float32)
    xs = np.random.RandomState(1).randn(16, 16).astype(np.float32)

    def f(w, xs):
        def cell(h, x):
            h = np_.tanh(w @ h + x)
            h = m.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + np_.sin(c), h)
            return h, np_.sum(h)
        def total(w):
            h, ys = m.lax.scan(cell, np_.zeros(16, np.float32), xs)
            return np_.sum(ys) + np_.sum(h)
        return m.value_and_grad(total)(w)
    return f, (w, xs)


def gp_step(m, np_):
    """examples/gaussian_process.py's update: value_and_grad of a GP's negative log
    marginal likelihood (kernel, Cholesky, triangular solve)."""
    sla = __import__(f"{m.__name__}.scipy.linalg", fromlist=["solve_triangular"])
    rng = np.random.RandomState(0)
    x = np.sort(rng.uniform(-3, 3, 24)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.randn(24)).astype(np.float32)
    params = {"log_length": np.float32(0.0), "log_signal": np.float32(0.0),
              "log_noise": np.float32(-1.0)}

    def nll(p):
        sq = (x[:, None] - x[None, :]) ** 2
        k = np_.exp(p["log_signal"]) * np_.exp(-0.5 * sq / np_.exp(2 * p["log_length"]))
        chol = np_.linalg.cholesky(k + (np_.exp(p["log_noise"]) + 1e-5) * np_.eye(24))
        alpha = sla.solve_triangular(chol, y, lower=True)
        return 0.5 * np_.sum(alpha ** 2) + np_.sum(np_.log(np_.diagonal(chol)))

    def update(p):
        loss, grads = m.value_and_grad(nll)(p)
        return m.tree_util.tree_map(lambda a, g: a - 0.02 * g, p, grads), loss
    return update, (params,)


PROGRAMS = {"recurrence": recurrence, "tanh_matvec": tanh_matvec, "mixed": mixed,
            "mlp_step": mlp_step, "cnn_step": cnn_step, "scan_loop": scan_loop,
            "gp_step": gp_step}


# -- measuring ------------------------------------------------------------------------------

def _sample(lib, np_, make, inner, clock):
    """Seconds to trace and to lower ``inner`` fresh copies of the program."""
    traced_all, t_trace, t_lower = [], 0.0, 0.0
    for _ in range(inner):
        f, args = make(lib, np_)
        gc.collect()
        start = clock()
        traced = lib.jit(f).trace(*args)
        t_trace += clock() - start
        traced_all.append(traced)
    for traced in traced_all:
        start = clock()
        traced.lower()
        t_lower += clock() - start
    return t_trace, t_lower


def measure(names, repeats, clock):
    import jax
    import jax.numpy as jjnp
    import traxla
    import traxla.numpy as tnp
    traxla.config.update("warn_unrolled_loops", False)
    libs = {"traxla": (traxla, tnp), "jax": (jax, jjnp)}
    out = {}
    for name in names:
        make = PROGRAMS[name]
        for lib, np_ in libs.values():  # warm-up: imports, backends, inner jits' caches
            _sample(lib, np_, make, 1, clock)
        start = clock()
        _sample(jax, jjnp, make, 1, clock)
        inner = max(1, min(60, int(0.15 / max(clock() - start, 1e-4))))  # >= ~0.15 s a sample
        ratios = {"trace": [], "lower": []}
        seconds = {"traxla": [], "jax": []}
        for rep in range(repeats):
            order = ["traxla", "jax"] if rep % 2 == 0 else ["jax", "traxla"]
            got = {k: _sample(*libs[k], make, inner, clock) for k in order}
            ratios["trace"].append(got["traxla"][0] / got["jax"][0])
            ratios["lower"].append(got["traxla"][1] / got["jax"][1])
            for k in got:
                seconds[k].append(got[k])
        # the ratio of the two libraries' fastest samples: the least disturbed by other
        # jobs (medians of the per-repetition ratios moved by 10-15% between runs)
        best = {k: [min(s[i] for s in v) for i in (0, 1)] for k, v in seconds.items()}
        out[name] = {
            "trace": round(best["traxla"][0] / best["jax"][0], 3),
            "lower": round(best["traxla"][1] / best["jax"][1], 3),
            "median_ratios": [round(statistics.median(ratios[k]), 3)
                              for k in ("trace", "lower")],
            "ms": {k: [round(1e3 * statistics.median(s[i] for s in v) / inner, 2)
                       for i in (0, 1)] for k, v in seconds.items()},
        }
        print(f"{name:12s} trace {out[name]['trace']:.3f}x  lower {out[name]['lower']:.3f}x"
              f"  (medians {out[name]['median_ratios']}; ms trace/lower: traxla {out[name]['ms']['traxla']}, "
              f"jax {out[name]['ms']['jax']})", flush=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--record", action="store_true",
                    help="write the figures (the worse of two runs)")
    ap.add_argument("--only", default="", help="comma-separated programs: " + ",".join(PROGRAMS))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="thread")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    names = [n for n in args.only.split(",") if n] or list(PROGRAMS)
    unknown = [n for n in names if n not in PROGRAMS]
    if unknown:
        ap.error(f"unknown programs {unknown}; known: {list(PROGRAMS)}")
    figures = measure(names, args.repeats, CLOCKS[args.clock])
    if args.record:  # the worse of two runs, as a check takes the better of two
        print("second run", flush=True)
        second = measure(names, args.repeats, CLOCKS[args.clock])
        figures = {n: {k: max(f[k], second[n][k]) for k in ("trace", "lower")}
                   for n, f in figures.items()}
        old = json.loads(RECORD.read_text())["programs"] if RECORD.exists() else {}
        old.update({n: {"trace": f["trace"], "lower": f["lower"]} for n, f in figures.items()})
        RECORD.write_text(json.dumps({"clock": args.clock, "repeats": args.repeats,
                                      "programs": old}, indent=1) + "\n")
        print(f"recorded {len(figures)} programs in {RECORD}")
        return 0
    recorded = json.loads(RECORD.read_text())["programs"]

    def over(figures):
        return {(name, stage): fig[stage] for name, fig in figures.items()
                for stage in ("trace", "lower")
                if recorded.get(name, {}).get(stage) is not None
                and fig[stage] > recorded[name][stage] * (1 + args.tolerance)}
    slow = over(figures)
    if slow:  # a second opinion: a busy machine moves single runs by 10-15%
        again_names = sorted({name for name, _ in slow})
        print(f"\nover the tolerance: {again_names}; measuring them again", flush=True)
        again = over(measure(again_names, args.repeats, CLOCKS[args.clock]))
        slow = {k: min(v, again[k]) for k, v in slow.items() if k in again}
    failures = [f"{name} {stage}: {ratio:.3f}x of JAX (the better of two runs), recorded "
                f"{recorded[name][stage]:.3f}x (+{100 * (ratio / recorded[name][stage] - 1):.0f}%)"
                for (name, stage), ratio in slow.items()]
    if failures:
        bar = "!" * 78
        print(f"\n{bar}\nREGRESSION: traxla got more than {100 * args.tolerance:.0f}% slower "
              f"relative to JAX:\n  " + "\n  ".join(failures) + f"\n{bar}")
        return 1
    print(f"\nOK: every ratio within {100 * args.tolerance:.0f}% of the recorded figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
