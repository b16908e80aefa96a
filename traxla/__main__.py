"""``python -m traxla``: the main job. Traces a real function, prints its jaxpr
and StableHLO, compiles and runs it, and reports what each stage cost."""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import traxla
import traxla.numpy as jnp
from traxla.cli import (inspect as inspect_cli, cache as cache_cli, exported as export_cli,
                        profile_dispatch)
from traxla.cli.bench import main as bench_main, plot_rows
from traxla.cli.api_coverage import api_coverage_table
from traxla.cli.rule_coverage import coverage_table


def _layer_demo(args):

    def layer(x, W, b):
        return jnp.maximum(x @ W + b, 0.0)

    def mlp(params, x):
        for W, b in params:
            x = jnp.tanh(x @ W + b)
        return jnp.sum(x, axis=1)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.batch, 8)).astype(np.float32)
    W = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal((16,)).astype(np.float32)

    print("== jaxpr of layer(x, W, b) = relu(x @ W + b)")
    print(traxla.make_jaxpr(layer)(x, W, b))

    jitted = traxla.jit(layer)
    traced = jitted.trace(x, W, b)
    lowered = traced.lower()
    print("\n== StableHLO")
    print(lowered.as_text())
    compiled = lowered.compile()
    print("== XLA optimized HLO")
    print(compiled.as_text())

    out = compiled(x, W, b)
    expected = np.maximum(x @ W + b, 0.0)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)

    xd, Wd, bd = (traxla.device_put(a) for a in (x, W, b))
    jitted(xd, Wd, bd).block_until_ready()
    n = args.calls
    start = time.perf_counter()
    for _ in range(n):
        jitted(xd, Wd, bd)
    jitted(xd, Wd, bd).block_until_ready()
    per_call = (time.perf_counter() - start) / n * 1e6

    params = [(rng.standard_normal((8, 32)).astype(np.float32), np.zeros(32, np.float32)),
              (rng.standard_normal((32, 32)).astype(np.float32), np.zeros(32, np.float32))]
    mlp_out = traxla.jit(mlp)(params, x)

    print("== result (first row):", np.asarray(out)[0, :6], "...")
    print("== mlp(params, x)[:4] =", np.asarray(mlp_out)[:4])
    print("== timings")
    print(f"  trace          {traced.trace_seconds * 1e3:8.2f} ms")
    print(f"  lower          {lowered.lower_seconds * 1e3:8.2f} ms")
    print(f"  XLA compile    {compiled.compile_seconds * 1e3:8.2f} ms")
    print(f"  cached call    {per_call:8.2f} us/call  (jit(layer), {n} calls, device arrays)")
    cost = compiled.cost_analysis()
    print(f"  cost analysis  flops={cost.get('flops', 0):.0f} bytes accessed={cost.get('bytes accessed', 0):.0f}")
    return 0


def _step_list(text):
    return [int(n) for n in text.split(",") if n.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="traxla", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="trace, lower, compile and run a real function (default)")
    demo.add_argument("--batch", type=int, default=4)
    demo.add_argument("--calls", type=int, default=2000)
    cov = sub.add_parser("coverage", help="print the primitive x rule coverage matrix")
    cov.add_argument("--api", action="store_true",
                     help="instead: per namespace, how many of JAX's public names traxla has "
                          "(needs jax installed)")
    inspect_cli.add_parser(sub)
    bench = sub.add_parser("scan-vs-unrolled",
                           help="the article's table: Python for vs lax.scan (traxla only; "
                                "benchmarks/scan_vs_unrolled.py adds JAX side by side)")
    bench.add_argument("--steps", type=_step_list, nargs="+", default=[[100, 300, 1000, 3000]],
                       help="lengths, e.g. 100 300 1000 or 100,300,1000")
    bench.add_argument("--plot", metavar="OUT.png",
                       help="also draw compile seconds against steps (needs matplotlib)")
    bench.add_argument("--cap", type=float, default=30.0, metavar="SECONDS",
                       help="time budget: skip an unrolled compile predicted above it "
                            "(default 30)")
    bench.add_argument("--no-budget", action="store_true",
                       help="compile every length, however long it takes")
    cache_cli.add_parser(sub)
    export_cli.add_parser(sub)
    profile_dispatch.add_parser(sub)
    args = parser.parse_args(argv)
    if args.command == "cache":
        return cache_cli.run(args)
    if args.command == "exported":
        return export_cli.run(args)
    if args.command == "profile-dispatch":
        return profile_dispatch.run(args)
    if args.command in (None, "demo"):
        if args.command is None:
            args = parser.parse_args(["demo"] + (argv or []))
        return _layer_demo(args)
    if args.command == "inspect":
        return inspect_cli.run(args)
    if args.command == "scan-vs-unrolled":
        rows = bench_main(tuple(n for group in args.steps for n in group),
                          None if args.no_budget else args.cap)
        if args.plot:
            plot_rows(rows, args.plot)
        return 0
    if args.command == "coverage" and args.api:
        print(api_coverage_table())
        return 0
    if args.command == "coverage":
        print(coverage_table())
        return 0
    return 1


if __name__ == "__main__":
    sys.exit(main())
