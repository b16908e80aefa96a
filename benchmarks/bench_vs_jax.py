"""Side-by-side timings of traxla and JAX, measured in the same process.

    python benchmarks/bench_vs_jax.py [--steps 2000] [--compile-steps 200]
                                      [--repeats 5] [--calls 20000] [--clock thread]
                                      [--json out.json]

Figures (each the median of ``--repeats`` runs, traxla and JAX interleaved):

  trace    ``make_jaxpr`` of an unrolled ``h = tanh(W @ h)`` recurrence
           (32x32 float32, ``--steps`` iterations of a Python for loop);
  lower    ``jit(f).trace(W, h).lower()`` of the same program (only ``.lower()``
           is timed);
  compile  ``lowered.compile()`` of the same program at ``--compile-steps``;
  call     microseconds per cached call of ``jit(lambda x: x + 1.0)`` on a (4,)
           float32 device array, without and with ``.block_until_ready()``, and
           of a jitted function of a 100-leaf pytree (50 layers of {"w", "b"});
  eager    microseconds per eager op outside ``jit`` on small device arrays:
           ``x + 1``, ``jnp.sin(x)``, ``x[1:]``, ``x @ y``;
  grad     trace + lower (first call) of ``jit(grad(loss))`` of a 2-layer MLP;
  lower also has a "mixed" row: a jnp-heavy program (weak-typed scalars, ``where``,
  softmax, mean, square; 15 equations a step, ``--mixed-steps`` steps);
  trace also has a lax-layer row (``lax.tanh(lax.dot(W, h))``) and a jnp row with
  weak-typed scalars (``jnp.tanh(W @ h) * 0.5 + 0.25``).

Every repetition of trace/lower/compile builds a fresh Python function object,
so neither library can answer from a tracing or lowering cache.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

# Compare like with like: traxla runs on the PJRT CPU client, so keep JAX on CPU
# too even on a machine with an accelerator (an explicit setting wins).
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import traxla  # noqa: E402
import traxla.numpy as tnp  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

LIBS = {"traxla": (traxla, tnp), "jax": (jax, jnp)}
BENCHES = ("eager", "trace", "lower", "compile", "call", "grad")


# -- the program ---------------------------------------------------------------
def make_recurrence(np_mod, steps: int):
    """A fresh function object on every call (defeats per-function caches)."""

    def recurrence(W, h):
        for _ in range(steps):
            h = np_mod.tanh(W @ h)
        return h

    return recurrence


def make_recurrence_lax(mod, steps: int):
    lax = mod.lax

    def recurrence(W, h):
        for _ in range(steps):
            h = lax.tanh(lax.dot(W, h))
        return h

    return recurrence


def make_recurrence_weak(np_mod, steps: int):
    def recurrence(W, h):
        for _ in range(steps):
            h = np_mod.tanh(W @ h) * 0.5 + 0.25
        return h

    return recurrence


def make_mixed(np_mod, steps: int):
    """A jnp-heavy step (15 equations): weak-typed scalars, ``where`` (a nested jit),
    a softmax (``max``, ``exp``, ``sum``), a mean and a square."""

    def mixed(W, h):
        for _ in range(steps):
            z = W @ h * 0.5 + 0.1
            z = np_mod.where(z > 0, z, 0.01 * z)
            e = np_mod.exp(z - np_mod.max(z))
            h = e / np_mod.sum(e) - np_mod.mean(h) ** 2
        return h

    return mixed


def make_inputs():
    rng = np.random.RandomState(0)
    # Gain 1: the state neither blows up nor decays to zero over a few hundred
    # steps, so the numeric cross-check below compares non-trivial values.
    W = (rng.randn(32, 32) / np.sqrt(32)).astype(np.float32)
    h = np.linspace(-1.0, 1.0, 32, dtype=np.float32)
    return W, h


# -- timing helpers --------------------------------------------------------------
# ``--clock thread`` times the calling thread's CPU time instead of the wall clock: on a
# shared, loaded machine it still measures dispatch work (it leaves out work on other
# threads: XLA's compiler threads and the asynchronous execution of programs).
CLOCKS = {"wall": time.perf_counter, "thread": time.thread_time}
clock = CLOCKS["wall"]


def timed(fn):
    gc.collect()
    start = clock()
    result = fn()
    return clock() - start, result


def median(xs):
    return statistics.median(xs)


def libs_in_turn(rep):
    """traxla first on even repetitions, JAX first on odd: no fixed-order bias."""
    items = list(LIBS.items())
    return items if rep % 2 == 0 else items[::-1]


def bench_trace(steps, repeats, W, h, variant="jnp"):
    samples = {name: [] for name in LIBS}
    n_eqns = {}
    for rep in range(repeats):
        for name, (mod, np_mod) in libs_in_turn(rep):
            f = (make_recurrence(np_mod, steps) if variant == "jnp" else
                 make_recurrence_lax(mod, steps) if variant == "lax" else
                 make_recurrence_weak(np_mod, steps))
            seconds, closed = timed(lambda: mod.make_jaxpr(f)(W, h))
            samples[name].append(seconds)
            n_eqns[name] = len(closed.jaxpr.eqns)
    return samples, n_eqns


def bench_lower(steps, repeats, W, h, make=make_recurrence):
    """Seconds per ``.lower()``, and each library's equation count (top level)."""
    samples = {name: [] for name in LIBS}
    n_eqns = {}
    for rep in range(repeats):
        for name, (mod, np_mod) in libs_in_turn(rep):
            traced = mod.jit(make(np_mod, steps)).trace(W, h)
            seconds, _ = timed(traced.lower)
            samples[name].append(seconds)
            n_eqns[name] = len(traced.jaxpr.eqns)
    return samples, n_eqns


def bench_compile(steps, repeats, W, h):
    samples = {name: [] for name in LIBS}
    outputs = {}
    for rep in range(repeats):
        for name, (mod, np_mod) in libs_in_turn(rep):
            lowered = mod.jit(make_recurrence(np_mod, steps)).trace(W, h).lower()
            seconds, compiled = timed(lowered.compile)
            samples[name].append(seconds)
            outputs[name] = np.asarray(compiled(W, h))
    return samples, outputs


def bench_call(calls, repeats):
    """Seconds per call: plain dispatch, and dispatch + block_until_ready."""
    samples = {name: {"call": [], "call_block": []} for name in LIBS}

    def loop(f, x):
        out = None
        for _ in range(calls):
            out = f(x)
        out.block_until_ready()  # drain async dispatch inside the timed region

    def loop_block(f, x):
        for _ in range(calls):
            f(x).block_until_ready()

    fns = {name: (mod.jit(lambda x: x + 1.0), mod.device_put(np.arange(4, dtype=np.float32)))
           for name, (mod, _) in LIBS.items()}
    for f, x in fns.values():  # compile, then warm up
        for _ in range(max(1000, calls // 10)):
            f(x).block_until_ready()
    for rep in range(repeats):
        for name, (f, x) in (fns.items() if rep % 2 == 0 else list(fns.items())[::-1]):
            seconds, _ = timed(lambda: loop(f, x))
            samples[name]["call"].append(seconds / calls)
            seconds, _ = timed(lambda: loop_block(f, x))
            samples[name]["call_block"].append(seconds / calls)
    return samples


def bench_pytree_call(calls, repeats):
    """Seconds per cached call of a jitted function of a 100-leaf pytree."""
    samples = {name: [] for name in LIBS}
    fns = {}
    for name, (mod, np_mod) in LIBS.items():
        params = {f"layer{i:02d}": {"w": mod.device_put(np.full((4,), i, np.float32)),
                                    "b": mod.device_put(np.zeros((4,), np.float32))}
                  for i in range(50)}
        fns[name] = (mod.jit(lambda p: p["layer00"]["w"] + p["layer49"]["b"]), params)
    for f, p in fns.values():
        for _ in range(max(200, calls // 10)):
            f(p).block_until_ready()
    for rep in range(repeats):
        for name, (f, p) in (fns.items() if rep % 2 == 0 else list(fns.items())[::-1]):
            def loop():
                out = None
                for _ in range(calls):
                    out = f(p)
                out.block_until_ready()
            seconds, _ = timed(loop)
            samples[name].append(seconds / calls)
    return samples


EAGER_OPS = ("x + 1", "jnp.sin(x)", "x[1:]", "x @ y")


def bench_eager(calls, repeats):
    """Seconds per eager op on small device arrays, per op in ``EAGER_OPS``."""
    samples = {op: {name: [] for name in LIBS} for op in EAGER_OPS}
    ops = {}
    for name, (mod, np_mod) in LIBS.items():
        x = mod.device_put(np.arange(4, dtype=np.float32))
        y = mod.device_put(np.ones((4, 4), np.float32))
        ops[name] = {"x + 1": lambda x=x: x + 1, "jnp.sin(x)": lambda x=x, m=np_mod: m.sin(x),
                     "x[1:]": lambda x=x: x[1:], "x @ y": lambda y=y: y @ y}
    for per_lib in ops.values():
        for fn in per_lib.values():
            for _ in range(100):
                fn().block_until_ready()
    for rep in range(repeats):
        for op in EAGER_OPS:
            for name, _ in libs_in_turn(rep):
                fn = ops[name][op]

                def loop():
                    out = None
                    for _ in range(calls):
                        out = fn()
                    out.block_until_ready()
                seconds, _ = timed(loop)
                samples[op][name].append(seconds / calls)
    return samples


def make_mlp_loss(mod, np_mod):
    """A fresh 2-layer MLP loss on every call (defeats per-function caches)."""

    def loss(params, x, y):
        (W1, b1), (W2, b2) = params
        h = np_mod.tanh(x @ W1 + b1)
        out = h @ W2 + b2
        return np_mod.mean((out - y) ** 2)

    return loss


def bench_grad(repeats):
    rng = np.random.RandomState(1)
    params = [(rng.randn(8, 32).astype(np.float32), np.zeros(32, np.float32)),
              (rng.randn(32, 4).astype(np.float32), np.zeros(4, np.float32))]
    x = rng.randn(16, 8).astype(np.float32)
    y = rng.randn(16, 4).astype(np.float32)
    samples = {name: [] for name in LIBS}
    for rep in range(repeats):
        for name, (mod, np_mod) in libs_in_turn(rep):
            g = mod.jit(mod.grad(make_mlp_loss(mod, np_mod)))
            seconds, _ = timed(lambda: g.trace(params, x, y).lower())
            samples[name].append(seconds)
    return samples


def warm_up(W, h):
    """Pays one-time costs (backend start, MLIR context, lazy imports) untimed."""
    for mod, np_mod in LIBS.values():
        f = make_recurrence(np_mod, 3)
        mod.make_jaxpr(f)(W, h)
        mod.jit(make_recurrence(np_mod, 3)).trace(W, h).lower().compile()(W, h)
        mod.make_jaxpr(make_recurrence_lax(mod, 3))(W, h)
        mod.make_jaxpr(make_recurrence_weak(np_mod, 3))(W, h)
        mod.jit(make_mixed(np_mod, 2)).trace(W, h).lower()


# -- reporting -----------------------------------------------------------------
def row(metric, unit, scale, samples):
    t = median(samples["traxla"]) * scale
    j = median(samples["jax"]) * scale
    return {"metric": metric, "unit": unit, "traxla": t, "jax": j,
            "ratio": t / j if j else float("nan"),
            "min": {k: min(samples[k]) * scale for k in ("traxla", "jax")},
            "samples": {k: [v * scale for v in samples[k]] for k in ("traxla", "jax")}}


def print_table(rows):
    headers = ("metric", "traxla", "jax", "traxla/jax")
    cells = [(f"{r['metric']} ({r['unit']})", f"{r['traxla']:.2f}", f"{r['jax']:.2f}",
              f"{r['ratio']:.2f}x") for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]

    def fmt(cols):
        first = cols[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cols[1:], widths[1:])]
        return " | ".join([first, *rest])

    print(fmt(headers))
    print("-+-".join("-" * w for w in widths))
    for c in cells:
        print(fmt(c))


def markdown_table(rows) -> str:
    lines = ["| figure | traxla | JAX | traxla/JAX |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['metric']} | {r['traxla']:.2f} {r['unit']} | {r['jax']:.2f} {r['unit']} "
                     f"| {r['ratio']:.2f}× |")
    return "\n".join(lines)


def environment():
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "traxla": getattr(traxla, "__version__", "?"),
        "jax": jax.__version__,
        "jax_backend": jax.default_backend(),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=1000,
                   help="unrolled steps for the trace and lower figures (default 1000)")
    p.add_argument("--mixed-steps", type=int, default=0,
                   help="steps of the mixed (jnp-heavy) program for the lower figure "
                        "(default --steps / 5; 15 equations a step)")
    p.add_argument("--compile-steps", type=int, default=100,
                   help="unrolled steps for the compile figure (default 100)")
    p.add_argument("--repeats", type=int, default=5,
                   help="repetitions per figure; the median is reported (default 5)")
    p.add_argument("--calls", type=int, default=10000,
                   help="cached calls per repetition of the call figures (default 10000)")
    p.add_argument("--eager-calls", type=int, default=1000,
                   help="eager ops per repetition of the eager figures (default 1000)")
    p.add_argument("--only", default=",".join(BENCHES),
                   help=f"comma-separated subset of {','.join(BENCHES)}")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="wall clock (default) or the calling thread's CPU time (steadier on "
                        "a loaded machine; leaves out work on other threads)")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON here")
    p.add_argument("--markdown", action="store_true",
                   help="also print the rows as the performance table of docs/performance.md")
    args = p.parse_args(argv)
    only = [b.strip() for b in args.only.split(",") if b.strip()]
    unknown = set(only) - set(BENCHES)
    if unknown:
        p.error(f"unknown benchmark(s) {sorted(unknown)}; choose from {BENCHES}")

    global clock
    clock = CLOCKS[args.clock]
    env = environment()
    print(f"traxla {env['traxla']} vs jax {env['jax']} ({env['jax_backend']}), "
          f"Python {env['python']}, {env['cpus']} CPUs; median of {args.repeats}, "
          f"{args.clock} clock", flush=True)
    W, h = make_inputs()
    warm_up(W, h)

    rows, extra = [], {}
    if "eager" in only:
        samples = bench_eager(args.eager_calls, args.repeats)
        for op in EAGER_OPS:
            rows.append(row(f"eager {op}", "us", 1e6, samples[op]))
    if "trace" in only:
        samples, n_eqns = bench_trace(args.steps, args.repeats, W, h)
        rows.append(row(f"trace {args.steps}-step make_jaxpr", "ms", 1e3, samples))
        extra["trace_eqns"] = n_eqns
        if len(set(n_eqns.values())) == 1:
            n = n_eqns["traxla"]
            rows.append(row("trace per equation", "us", 1e6 / n, samples))
        for variant, label in (("lax", "lax layer"), ("weak", "jnp + weak scalars")):
            samples, n_eqns = bench_trace(args.steps, args.repeats, W, h, variant)
            if len(set(n_eqns.values())) == 1:
                rows.append(row(f"trace per equation, {label}", "us", 1e6 / n_eqns["traxla"],
                                samples))
            else:
                print(f"note: {label} equation counts differ: {n_eqns}", file=sys.stderr)
    if "lower" in only:
        samples, _ = bench_lower(args.steps, args.repeats, W, h)
        rows.append(row(f"lower {args.steps}-step", "ms", 1e3, samples))
        rows.append(row("lower per equation", "us", 1e6 / (2 * args.steps), samples))
        mixed_steps = args.mixed_steps or max(1, args.steps // 5)
        samples, n_eqns = bench_lower(mixed_steps, args.repeats, W, h, make_mixed)
        if len(set(n_eqns.values())) != 1:
            print(f"note: mixed-program equation counts differ: {n_eqns}", file=sys.stderr)
        rows.append(row(f"lower per equation, mixed ({n_eqns['traxla']} eqns)", "us",
                        1e6 / n_eqns["traxla"], samples))
    if "compile" in only:
        samples, outputs = bench_compile(args.compile_steps, args.repeats, W, h)
        rows.append(row(f"compile {args.compile_steps}-step", "ms", 1e3, samples))
        agree = bool(np.allclose(outputs["traxla"], outputs["jax"], rtol=1e-4, atol=1e-5))
        extra["compile_outputs_agree"] = agree
        if not agree:
            diff = np.abs(outputs["traxla"] - outputs["jax"]).max()
            print(f"WARNING: compiled outputs differ (max abs diff {diff:.3g})", file=sys.stderr)
    if "call" in only:
        samples = bench_call(args.calls, args.repeats)
        rows.append(row("cached call jit(x + 1.0)", "us", 1e6,
                        {k: v["call"] for k, v in samples.items()}))
        rows.append(row("cached call + block_until_ready", "us", 1e6,
                        {k: v["call_block"] for k, v in samples.items()}))
        rows.append(row("cached call, 100-leaf pytree", "us", 1e6,
                        bench_pytree_call(args.calls // 2, args.repeats)))
    if "grad" in only:
        rows.append(row("grad 2-layer MLP trace+lower", "ms", 1e3, bench_grad(args.repeats)))

    print()
    print_table(rows)
    if "trace_eqns" in extra:
        print(f"\nequations traced: {extra['trace_eqns']}")
    if "compile_outputs_agree" in extra:
        print(f"compiled outputs agree: {extra['compile_outputs_agree']}")

    if args.markdown:
        print()
        print(markdown_table(rows))
    if args.json:
        payload = {"config": vars(args), "environment": env, "results": rows, **extra}
        with open(args.json, "w") as fh:
            json.dump(payload, fh, indent=2)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
