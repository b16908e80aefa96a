"""traxla vs JAX on the accelerator (a TPU: written for one v5e chip, 197 bf16 TFLOP/s peak),
each in its own process, one after the other (one process at a time can hold a TPU):

    python benchmarks/tpu_bench.py [--quick] [--json out.json]

Figures (medians): bf16 8192^3 matmul TFLOP/s (20 calls in flight, one wait); an MLP training step; a transformer-block
training step; scan vs unrolled loop, compile + first run, N = 10, 100, 1000; an eager op;
a cached jit call; 10,000 calls dispatched asynchronously. Prints each figure for both and
the ratio traxla/JAX (for times: above 1 is slower; for TFLOP/s: below 1 is slower). Every
part runs in its own try/except: a failure prints what failed and the rest go on."""
from __future__ import annotations

import argparse
import json
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


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def worker(framework: str, quick: bool) -> dict:
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

    def part(name, fn):
        start = time.perf_counter()
        try:
            out.update(fn())
        except Exception as e:  # noqa: BLE001 - report and go on
            out[f"FAILED {name}"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            traceback.print_exc()
        print(f"[{framework}] {name} {time.perf_counter() - start:.1f}s", file=sys.stderr,
              flush=True)

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
        res = {}
        w = jnp.asarray(rng.standard_normal((64, 64), np.float32) / 8)
        h0 = jnp.asarray(rng.standard_normal((64,), np.float32))
        for n in (10, 100) if quick else (10, 100, 1000):
            def scanned(w, h, n=n):
                return lax.scan(lambda h, _: (jnp.tanh(w @ h), None), h, None, length=n)[0]

            def unrolled(w, h, n=n):
                for _ in range(n):
                    h = jnp.tanh(w @ h)
                return h
            for name, fn in (("scan", scanned), ("unrolled", unrolled)):
                t = time.perf_counter()
                block(jax.jit(fn)(w, h0))
                res[f"{name}_N{n}_compile_run_s"] = time.perf_counter() - t
        return res

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
    part("scan vs unrolled", loops)
    part("calls", calls)
    return out


_HIGHER_IS_BETTER = {"matmul_bf16_tflops"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", choices=("jax", "traxla"))
    parser.add_argument("--out")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.worker:
        result = worker(args.worker, args.quick)
        with open(args.out, "w") as f:
            json.dump(result, f)
        return 0
    results = {}
    for fw in ("jax", "traxla"):
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            path = f.name
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", fw, "--out", path]
        if args.quick:
            cmd.append("--quick")
        time.sleep(3)  # the chip can refuse a process started right after another ended
        start = time.perf_counter()
        proc = subprocess.run(cmd, timeout=600)
        try:
            with open(path) as f:
                results[fw] = json.load(f)
        except (OSError, ValueError):
            results[fw] = {"FAILED process": f"exit status {proc.returncode}"}
        print(f"[{fw}] process {time.perf_counter() - start:.0f}s, exit {proc.returncode}",
              flush=True)
    jx, tx = results["jax"], results["traxla"]
    print(f"\n== tpu_bench: JAX on {jx.get('device')}, traxla on {tx.get('device')}")
    print(f"{'figure':34s} {'JAX':>12s} {'traxla':>12s} {'traxla/JAX':>11s}")
    for key in sorted(set(jx) | set(tx), key=lambda k: (k.startswith("FAILED"), k)):
        if key in ("device", "backend"):
            continue
        a, b = jx.get(key), tx.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)):
            ratio = b / a if a else float("nan")
            print(f"{key:34s} {a:12.4g} {b:12.4g} {ratio:11.2f}")
        else:
            print(f"{key:34s} {str(a)[:40]!s:>12s} {str(b)[:60]!s}")
    for fw in ("jax", "traxla"):
        flops = results[fw].get("matmul_bf16_tflops")
        if isinstance(flops, float):
            print(f"{fw}: bf16 matmul at {flops:.1f} TFLOP/s, {100 * flops / PEAK_TFLOPS:.0f}% "
                  f"of the v5e's {PEAK_TFLOPS:.0f} peak")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
