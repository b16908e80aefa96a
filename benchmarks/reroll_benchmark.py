"""Re-rolling the article's unrolled loop: ``h = tanh(W @ h)`` written as a Python
``for`` of N = 5,000 steps (10,000 equations), compiled by traxla with
``reroll_loops`` on, next to JAX compiling the same unrolled program.

    python benchmarks/reroll_benchmark.py [--steps 5000] [--jax-steps 100 300] [--full]

- traxla side (measured): trace of the unrolled loop, detection + re-rolling into a scan,
  lowering and XLA compile, and the run time of the re-rolled program.
- JAX side: compiling 10,000 unrolled equations takes minutes (185 s on this machine,
  issue #19), so by default it is EXTRAPOLATED from JAX's compile at ``--jax-steps``
  with the power law of benchmarks/scan_vs_unrolled.py (``traxla.cli.bench._predicted_compile``,
  fitted to the last two lengths, at least linear); ``--full`` compiles it for real.
- Same numbers: the re-rolled result is compared bitwise with the unrolled program run
  op by op (each primitive XLA-compiled on its own, the same primitives in the same
  order), and at ``--check-steps`` with the unrolled program compiled whole by traxla
  (also with ``--full`` at N itself). Run time of scan vs straight line is measured at
  ``--check-steps``.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import traxla  # noqa: E402
import traxla.numpy as tnp  # noqa: E402
from traxla import diagnostics  # noqa: E402
from traxla.cli.bench import _predicted_compile  # noqa: E402


def recurrence(np_mod, steps):
    def f(W, h):
        for _ in range(steps):
            h = np_mod.tanh(W @ h)
        return h
    return f


def data():
    rng = np.random.default_rng(0)
    W = (rng.standard_normal((32, 32)) / 8).astype(np.float32)
    h = rng.standard_normal(32).astype(np.float32)
    return W, h


def median_run(fn, args, runs=20):
    fn(*args).block_until_ready()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn(*args).block_until_ready()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def traxla_rerolled(steps):
    W, h = data()
    warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
    with traxla.config.flag("reroll_loops", True):
        jitted = traxla.jit(recurrence(tnp, steps))
        t0 = time.perf_counter()
        traced = jitted.trace(W, h)
        trace_s = time.perf_counter() - t0   # tracing 2*steps equations + detect + re-roll
    t0 = time.perf_counter()
    lowered = traced.lower()
    lower_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = lowered.compile()
    compile_s = time.perf_counter() - t0
    out = np.asarray(compiled(W, h))
    return dict(trace_s=trace_s, lower_s=lower_s, compile_s=compile_s,
                eqns=len(traced.jaxpr.eqns), run_s=median_run(compiled, (W, h)), out=out)


def traxla_unrolled(steps, run=True):
    W, h = data()
    warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
    jitted = traxla.jit(recurrence(tnp, steps))
    t0 = time.perf_counter()
    compiled = jitted.lower(W, h).compile()
    total = time.perf_counter() - t0
    out = np.asarray(compiled(W, h))
    return dict(total_s=total, out=out, run_s=median_run(compiled, (W, h)) if run else None)


def traxla_op_by_op(steps):
    W, h = data()
    W, h = traxla.device_put(W), traxla.device_put(h)
    t0 = time.perf_counter()
    out = np.asarray(recurrence(tnp, steps)(W, h))
    return out, time.perf_counter() - t0


def jax_compile(steps):
    import jax
    import jax.numpy as jnp
    W, h = data()
    lowered = jax.jit(recurrence(jnp, steps)).lower(W, h)
    t0 = time.perf_counter()
    lowered.compile()
    return time.perf_counter() - t0


def which_programs_reroll():
    """Rows ``(program, found, re-rolled, why not)`` over the kinds of loop the tests use."""
    rng = np.random.default_rng(1)
    W8 = (rng.standard_normal((8, 8)) / 3).astype(np.float32)
    Wx = rng.standard_normal((4, 8)).astype(np.float32)
    xs = rng.standard_normal((24, 4)).astype(np.float32)
    h8 = np.zeros(8, np.float32)

    def rnn_list(xs_list, h):
        for x in xs_list:
            h = tnp.tanh(x @ Wx + h @ W8)
        return h

    def rnn_indexed(xs, h):
        for t in range(xs.shape[0]):
            h = tnp.tanh(xs[t] @ Wx + h @ W8)
        return h

    def rk4(y):
        def f(y):
            return tnp.stack([y[1], -tnp.sin(y[0])])
        for _ in range(24):
            k1 = f(y)
            k2 = f(y + 0.05 * k1)
            k3 = f(y + 0.05 * k2)
            k4 = f(y + 0.1 * k3)
            y = y + 0.1 / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y

    def collected(h):
        hs = []
        for _ in range(40):
            h = tnp.tanh(W8 @ h)
            hs.append(h)
        return tnp.stack(hs)

    def printing(h):
        for _ in range(24):
            h = tnp.tanh(W8 @ h)
            traxla.debug.print("{}", h[0])
        return h

    def fibonacci_like(a, b):   # reads the two steps before: re-rolled two steps per block
        for _ in range(49):
            a, b = b, tnp.sin(a) + b
        return b

    def layers(x):              # a different width per layer: nothing repeats
        for width in range(8, 48):
            x = tnp.sin(tnp.ones((width, x.shape[0]), x.dtype) @ x)
        return x

    programs = [("article h = tanh(W @ h)", recurrence(tnp, 100), data()),
                ("RNN over a list of inputs", rnn_list, (list(xs), h8)),
                ("RNN indexing xs[t]", rnn_indexed, (xs, h8)),
                ("RK4 integrator", rk4, (np.array([1.0, 0.0], np.float32),)),
                ("outputs collected per step", collected, (h8 + 1,)),
                ("debug.print in the loop", printing, (h8 + 1,)),
                ("a, b = b, sin(a) + b", fibonacci_like, (h8, h8 + 1)),
                ("layers of different widths", layers, (np.ones(8, np.float32),))]
    rows = []
    for name, fn, args in programs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", diagnostics.UnrolledLoopWarning)
            jaxpr = traxla.make_jaxpr(fn)(*args)
        loops = diagnostics.find_unrolled_loops(jaxpr)
        _, done = diagnostics.reroll_jaxpr(jaxpr, loops)
        found = ", ".join(f"{lp.repeats}x{lp.block_len}" for lp in loops) or "none"
        why = "; ".join(lp.reason for lp in loops if not lp.rerollable)
        rows.append((name, len(jaxpr.eqns), found, len(done), why))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--jax-steps", type=int, nargs=2, default=[100, 300])
    parser.add_argument("--check-steps", type=int, default=300)
    parser.add_argument("--full", action="store_true",
                        help="also compile the N-step unrolled program (JAX and traxla): "
                             "minutes")
    parser.add_argument("--no-jax", action="store_true")
    args = parser.parse_args(argv)
    n = args.steps

    print("which programs re-roll (repetitions x block equations):")
    for name, eqns, found, done, why in which_programs_reroll():
        print(f"  {name:28s} {eqns:5d} eqns  loops: {found:10s} re-rolled: {done}"
              + (f"  ({why})" if why else ""))
    print()
    rolled = traxla_rerolled(n)
    total = rolled["trace_s"] + rolled["lower_s"] + rolled["compile_s"]
    print(f"traxla, reroll_loops=True, N={n} ({2 * n} equations traced -> "
          f"{rolled['eqns']} after re-rolling)")
    print(f"  trace + detect + re-roll {rolled['trace_s']:8.3f} s")
    print(f"  lower                    {rolled['lower_s']:8.3f} s")
    print(f"  XLA compile              {rolled['compile_s']:8.3f} s")
    print(f"  total                    {total:8.3f} s")
    print(f"  run (scan)               {rolled['run_s'] * 1e3:8.3f} ms")

    reference, eager_s = traxla_op_by_op(n)
    same = np.array_equal(reference, rolled["out"]) and \
        reference.tobytes() == rolled["out"].tobytes()
    print(f"  bitwise equal to the unrolled program run op by op: {same} "
          f"(max |diff| {np.abs(reference - rolled['out']).max():.3g}; op by op took "
          f"{eager_s:.2f} s)")

    m = args.check_steps
    small_rolled, small_unrolled = traxla_rerolled(m), traxla_unrolled(m)
    same_small = small_rolled["out"].tobytes() == small_unrolled["out"].tobytes()
    print(f"  N={m}: bitwise equal to the unrolled program compiled whole: {same_small}; "
          f"run time scan {small_rolled['run_s'] * 1e6:.1f} us vs straight line "
          f"{small_unrolled['run_s'] * 1e6:.1f} us; compile scan "
          f"{small_rolled['compile_s']:.3f} s vs straight line {small_unrolled['total_s']:.2f} s")
    if args.full:
        full = traxla_unrolled(n, run=False)
        print(f"  N={n}: traxla unrolled compile {full['total_s']:.1f} s; bitwise equal to "
              f"re-rolled: {full['out'].tobytes() == rolled['out'].tobytes()}")

    if args.no_jax:
        return
    history = [(s, jax_compile(s)) for s in args.jax_steps]
    for s, c in history:
        print(f"JAX unrolled compile, N={s}: {c:.2f} s (measured)")
    if args.full:
        jax_n = jax_compile(n)
        print(f"JAX unrolled compile, N={n}: {jax_n:.1f} s (measured)")
    else:
        jax_n = _predicted_compile(history, n)
        print(f"JAX unrolled compile, N={n}: {jax_n:.1f} s (EXTRAPOLATED with the power law "
              f"of benchmarks/scan_vs_unrolled.py from N={args.jax_steps}; issue #19 "
              "measured 185 s on this machine)")
    print(f"ratio: traxla re-rolled total {total:.2f} s / JAX unrolled compile "
          f"{jax_n:.1f} s = {total / jax_n:.4f}x (target <= 0.05x)")


if __name__ == "__main__":
    main()
