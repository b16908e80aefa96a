"""traxla vs JAX on the accelerator (a TPU: written for one v5e chip, 197 bf16 TFLOP/s peak),
each in its own process, one after the other (one process at a time can hold a TPU):

    python benchmarks/tpu_bench.py [--quick] [--json out.json] [--steps 10 100 1000 5000] [--rounds 2]
                                   [--unrolled-budget 90] [--parts mlp loops pallas]

Figures (medians): bf16 8192^3 matmul TFLOP/s (20 calls in flight, one wait); an MLP training step; a transformer-block
training step; scan vs unrolled loop (``h = tanh(W @ h)``, 64x64), compile + first run and
the run of a cached call, N = 10, 100, 1000, 5000, and for traxla the unrolled loop
re-rolled into a scan (``traxla.diagnostics.reroll``); an eager op; a cached jit call;
10,000 calls dispatched asynchronously. Prints each figure for both and the ratio
traxla/JAX (for times: above 1 is slower; for TFLOP/s: below 1 is slower), then the
scan-vs-unrolled table. An unrolled compile predicted (a power law through the last two
lengths) above ``--unrolled-budget`` seconds is skipped and said so. Every part runs in its
own try/except: a failure prints what failed and the rest go on; a worker writes its figures
after each part, so one stopped by the time limit still reports what it measured.
``--quick``: small sizes and N = 10, 100 (a smoke run; it also runs on a CPU)."""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEAK_TFLOPS = 197.0
LOOP_STEPS = (10, 100, 1000, 5000)
QUICK_LOOP_STEPS = (10, 100)
UNROLLED_BUDGET_S = 90.0  # JAX compiles 5,000 unrolled steps in minutes on some machines
WORKER_TIMEOUT_S = 600


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def _predicted_seconds(history, n):
    """Compile + first run at ``n`` from the measured ``(n, seconds)`` (a power law through
    the last two, at least linear; linear from one)."""
    if not history:
        return None
    if len(history) == 1:
        (n1, t1), = history
        return t1 * n / n1
    (n0, t0), (n1, t1) = history[-2:]
    k = max(1.0, math.log(max(t1, 1e-9) / max(t0, 1e-9)) / math.log(n1 / n0))
    return t1 * (n / n1) ** k


COMPILE_REPEATS = 3  # compile + first run of a loop of N <= 1,000 steps: median of three


def _fresh(fn):
    """A new function object with ``fn``'s code: a jit of it shares no cache with ``fn``'s."""
    def fresh(*args):
        return fn(*args)
    return fresh


def _median_figures(rounds):
    """Per figure, the median over the rounds that measured it (failures kept if no number)."""
    merged = {}
    for key in {k for r in rounds for k in r}:
        nums = [r[key] for r in rounds if isinstance(r.get(key), (int, float))]
        merged[key] = statistics.median(nums) if nums else next(
            r[key] for r in rounds if key in r)
    return merged


PARTS = ("matmul", "mlp", "transformer", "calls", "loops")
# ``--parts pallas``: the Pallas kernels (benchmarks/pallas_tpu_bench.py, its own JAX and
# traxla processes), run after the parts above.
ALL_PARTS = PARTS + ("pallas",)


def worker(framework: str, quick: bool, out_path: str, steps=None,
           unrolled_budget: float = UNROLLED_BUDGET_S, parts=PARTS) -> dict:
    if framework == "jax":
        import jax
        import jax.numpy as jnp
        from jax import lax
    else:
        sys.path.insert(0, REPO)
        import traxla as jax
        import traxla.numpy as jnp
        from traxla import lax
    out = {"device": repr(jax.devices()[0]), "backend": jax.default_backend()}
    block = jax.block_until_ready
    rng = np.random.default_rng(0)

    def save():
        with open(out_path, "w") as f:
            json.dump(out, f)

    def part(name, fn):
        if fn.__name__ not in parts:
            return
        start = time.perf_counter()
        try:
            out.update(fn())
        except Exception as e:  # noqa: BLE001 - report and go on
            out[f"FAILED {name}"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            traceback.print_exc()
        print(f"[{framework}] {name} {time.perf_counter() - start:.1f}s", file=sys.stderr,
              flush=True)
        save()

    def matmul():
        n = 512 if quick else 8192
        a = jax.device_put(rng.standard_normal((n, n), np.float32).astype(jnp.bfloat16))
        b = jax.device_put(rng.standard_normal((n, n), np.float32).astype(jnp.bfloat16))
        f = jax.jit(lambda a, b: a @ b)
        block(f(a, b))
        calls = 20  # dispatched back to back, one wait: the chip's throughput, not the host's

        def pipelined():
            outs = [f(a, b) for _ in range(calls)]
            block(outs[-1])
        t = _median_time(pipelined, 5) / calls
        return {"matmul_bf16_tflops": 2 * n ** 3 / t / 1e12}

    def mlp():
        sizes = [784, 2048, 2048, 10]
        params = [(jnp.asarray(rng.standard_normal((i, o), np.float32) / np.sqrt(i)),
                   jnp.zeros((o,), jnp.float32)) for i, o in zip(sizes[:-1], sizes[1:])]
        m = 64 if quick else 1024
        x = jnp.asarray(rng.standard_normal((m, 784), np.float32))
        y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, m)])

        def loss(ps, x, y):
            h = x
            for w, b in ps[:-1]:
                h = jnp.maximum(h @ w + b, 0)
            w, b = ps[-1]
            logits = h @ w + b
            logp = logits - jax.nn.logsumexp(logits, axis=-1, keepdims=True)
            return -jnp.mean(jnp.sum(logp * y, axis=-1))

        @jax.jit
        def step(ps, x, y):
            g = jax.grad(loss)(ps, x, y)
            return jax.tree_util.tree_map(lambda p, d: p - 1e-3 * d, ps, g)

        t0 = time.perf_counter()
        ps = block(step(params, x, y))
        first = time.perf_counter() - t0
        steps = 20 if quick else 100

        def run():
            nonlocal ps
            for _ in range(steps):
                ps = step(ps, x, y)
            block(ps)
        return {"mlp_step_ms": _median_time(run, 3) / steps * 1e3, "mlp_first_call_s": first}

    def transformer():
        d, heads, seq, batch, hidden = (128, 4, 64, 2, 256) if quick else (1024, 16, 512, 8, 4096)
        init = lambda *s: jnp.asarray(rng.standard_normal(s, np.float32) / np.sqrt(s[0]))  # noqa: E731
        params = {"wq": init(d, d), "wk": init(d, d), "wv": init(d, d), "wo": init(d, d),
                  "w1": init(d, hidden), "w2": init(hidden, d),
                  "g1": jnp.ones((d,)), "g2": jnp.ones((d,))}
        x = jnp.asarray(rng.standard_normal((batch, seq, d), np.float32)).astype(jnp.bfloat16)

        def norm(h, g):
            h = h.astype(jnp.float32)
            h = (h - h.mean(-1, keepdims=True)) * lax.rsqrt(jnp.var(h, axis=-1, keepdims=True) + 1e-5)
            return (h * g).astype(jnp.bfloat16)

        def block_fn(p, x):
            bf = {k: v.astype(jnp.bfloat16) for k, v in p.items()}
            h = norm(x, p["g1"])
            q, k, v = (jnp.reshape(h @ bf[n], (batch, seq, heads, d // heads))
                       for n in ("wq", "wk", "wv"))
            s = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / np.sqrt(d // heads)
            mask = jnp.tril(jnp.ones((seq, seq), bool))
            s = jnp.where(mask, s, -1e9)
            a = jax.nn.softmax(s, axis=-1).astype(jnp.bfloat16)
            o = jnp.einsum("bhqk,bkhd->bqhd", a, v).reshape(batch, seq, d)
            x = x + o @ bf["wo"]
            h = norm(x, p["g2"])
            return x + jax.nn.gelu(h @ bf["w1"]) @ bf["w2"]

        def loss(p, x):
            return jnp.mean(block_fn(p, x).astype(jnp.float32) ** 2)

        @jax.jit
        def step(p, x):
            g = jax.grad(loss)(p, x)
            return jax.tree_util.tree_map(lambda a, b: a - 1e-3 * b, p, g)

        t0 = time.perf_counter()
        p = block(step(params, x))
        first = time.perf_counter() - t0
        steps = 5 if quick else 20

        def run():
            nonlocal p
            for _ in range(steps):
                p = step(p, x)
            block(p)
        return {"transformer_step_ms": _median_time(run, 3) / steps * 1e3,
                "transformer_first_call_s": first}

    def loops():
        res = out  # written into the figures as they come (a worker stopped keeps them)
        w = jnp.asarray(rng.standard_normal((64, 64), np.float32) / 8)
        h0 = jnp.asarray(rng.standard_normal((64,), np.float32))
        history = []  # (N, compile + first run seconds) of the unrolled loops
        for n in steps or (QUICK_LOOP_STEPS if quick else LOOP_STEPS):
            def scanned(w, h, n=n):
                return lax.scan(lambda h, _: (jnp.tanh(w @ h), None), h, None, length=n)[0]

            def unrolled(w, h, n=n):
                for _ in range(n):
                    h = jnp.tanh(w @ h)
                return h
            modes = [("scan", scanned), ("unrolled", unrolled)]
            if framework == "traxla":  # the same unrolled loop, re-rolled into a scan
                modes.append(("rerolled", jax.diagnostics.reroll(unrolled)))
            for name, fn in modes:
                key = f"{name}_N{n}_compile_run_s"
                predicted = _predicted_seconds(history, n) if name == "unrolled" else None
                if predicted is not None and predicted > unrolled_budget:
                    res[f"SKIPPED {key}"] = (f"predicted {predicted:.0f} s > "
                                             f"--unrolled-budget {unrolled_budget:g} s")
                    continue
                # compile + first run: median of fresh jit objects (each traces, lowers and
                # compiles again), so one noisy XLA compile does not decide the figure
                times = []
                for _ in range(COMPILE_REPEATS if n <= 1000 else 1):
                    f = jax.jit(_fresh(fn))
                    t = time.perf_counter()
                    block(f(w, h0))
                    times.append(time.perf_counter() - t)
                res[key] = statistics.median(times)
                if name == "unrolled":
                    history.append((n, res[key]))
                res[f"{name}_N{n}_run_ms"] = _median_time(lambda: block(f(w, h0)), 21) * 1e3
                save()
        return {}

    def calls():
        x = jnp.ones((4,), jnp.float32)
        block(x + 1)
        n = 1000

        def eager():
            for _ in range(n):
                block(x + 1)
        f = jax.jit(lambda x: x + 1.0)
        block(f(x))

        def cached():
            for _ in range(n):
                block(f(x))

        def many():
            y = x
            for _ in range(10_000):
                y = f(y)
            block(y)
        return {"eager_op_us": _median_time(eager, 3) / n * 1e6,
                "cached_call_us": _median_time(cached, 3) / n * 1e6,
                "async_10k_calls_ms": _median_time(many, 3) * 1e3}

    part("matmul", matmul)
    part("mlp", mlp)
    part("transformer", transformer)
    part("calls", calls)
    part("scan vs unrolled", loops)  # last: the longest (a worker stopped keeps the rest)
    return out


_HIGHER_IS_BETTER = {"matmul_bf16_tflops"}


def _loop_table(jx, tx):
    """The scan-vs-unrolled table: compile + first run (s) and a cached run (ms) per N."""
    ns = sorted({int(k.split("_N")[1].split("_")[0]) for d in (jx, tx) for k in d
                 if "_N" in k and k.endswith("_compile_run_s") and not k.startswith("FAILED")})
    if not ns:
        return
    cols = [("JAX scan", jx, "scan"), ("JAX unrolled", jx, "unrolled"),
            ("traxla scan", tx, "scan"), ("traxla unrolled", tx, "unrolled"),
            ("traxla re-rolled", tx, "rerolled")]

    def cell(d, mode, n, suffix, fmt):
        v = d.get(f"{mode}_N{n}_{suffix}")
        if isinstance(v, (int, float)):
            return format(v, fmt)
        return "skipped" if f"SKIPPED {mode}_N{n}_compile_run_s" in d else "-"
    for title, suffix, fmt in (("compile + first run, s", "compile_run_s", ".3f"),
                               ("cached run, ms", "run_ms", ".3f")):
        print(f"\n== scan vs unrolled (h = tanh(W @ h), 64x64): {title}")
        print(f"{'N':>6s} " + " ".join(f"{c[0]:>16s}" for c in cols))
        for n in ns:
            print(f"{n:6d} " + " ".join(f"{cell(d, m, n, suffix, fmt):>16s}" for _, d, m in cols))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", choices=("jax", "traxla"))
    parser.add_argument("--out")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--json")
    parser.add_argument("--steps", type=int, nargs="+",
                        help=f"loop lengths (default {LOOP_STEPS}; --quick: {QUICK_LOOP_STEPS})")
    parser.add_argument("--unrolled-budget", type=float, default=UNROLLED_BUDGET_S,
                        help="skip an unrolled compile predicted above this many seconds")
    parser.add_argument("--parts", nargs="+", choices=ALL_PARTS, default=ALL_PARTS,
                        help="measure only these parts (default: all)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run the two workers alternately this many times; each figure "
                             "is the median over the rounds")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.quick, args.out, args.steps, args.unrolled_budget, args.parts)
        return 0
    pallas = "pallas" in args.parts
    args.parts = [p for p in args.parts if p != "pallas"]
    if args.parts:
        _run_parts(args)
    if pallas:
        cmd = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "pallas_tpu_bench.py")]
        if args.quick:
            cmd.append("--quick")
        if args.json:
            cmd += ["--out", os.path.splitext(args.json)[0] + "_pallas.json"]
        time.sleep(3)
        return subprocess.run(cmd).returncode
    return 0


def _run_parts(args):
    results = {"jax": [], "traxla": []}
    for fw in ("jax", "traxla") * args.rounds:
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", fw, "--out", path,
               "--unrolled-budget", str(args.unrolled_budget), "--parts", *args.parts]
        if args.quick:
            cmd.append("--quick")
        if args.steps:
            cmd += ["--steps", *map(str, args.steps)]
        time.sleep(3)  # the chip can refuse a process started right after another ended
        start = time.perf_counter()
        try:
            status = subprocess.run(cmd, timeout=WORKER_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            status = f"stopped after {WORKER_TIMEOUT_S} s"
        try:
            with open(path) as f:
                figures = json.load(f)
        except (OSError, ValueError):
            figures = {}
        if status != 0:
            figures["FAILED process"] = f"exit status {status}"
        results[fw].append(figures)
        print(f"[{fw}] process {time.perf_counter() - start:.0f}s, exit {status}", flush=True)
    per_round = results
    results = {fw: _median_figures(rounds) for fw, rounds in results.items()}
    jx, tx = results["jax"], results["traxla"]
    print(f"\n== tpu_bench: JAX on {jx.get('device')}, traxla on {tx.get('device')}")
    print(f"{'figure':34s} {'JAX':>12s} {'traxla':>12s} {'traxla/JAX':>11s}")
    skipped = ("FAILED", "SKIPPED")
    for key in sorted(set(jx) | set(tx), key=lambda k: (k.startswith(skipped), k)):
        if key in ("device", "backend"):
            continue
        a, b = jx.get(key), tx.get(key)
        num_a, num_b = isinstance(a, (int, float)), isinstance(b, (int, float))
        if num_a and num_b:
            ratio = b / a if a else float("nan")
            print(f"{key:34s} {a:12.4g} {b:12.4g} {ratio:11.2f}")
        elif (num_a or a is None) and (num_b or b is None):  # one side only (re-rolled: traxla)
            print(f"{key:34s} {'-' if a is None else format(a, '12.4g'):>12s} "
                  f"{'-' if b is None else format(b, '12.4g'):>12s}")
        else:
            print(f"{key:34s} JAX: {str(a)[:60]} | traxla: {str(b)[:60]}")
    _loop_table(jx, tx)
    for fw in ("jax", "traxla"):
        flops = results[fw].get("matmul_bf16_tflops")
        if isinstance(flops, float):
            print(f"{fw}: bf16 matmul at {flops:.1f} TFLOP/s, {100 * flops / PEAK_TFLOPS:.0f}% "
                  f"of the v5e's {PEAK_TFLOPS:.0f} peak")
    if args.json:
        with open(args.json, "w") as f:  # the medians, and each round's figures
            json.dump({**results, "rounds": per_round}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
