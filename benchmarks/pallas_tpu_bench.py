"""Pallas kernels compiled by traxla (its own Mosaic lowering) vs by JAX, on a TPU (written
for one v5e chip, 197 bf16 TFLOP/s peak), each side in its own process, JAX first (one
process at a time can hold a TPU); traxla runs the very same code under the drop-in
(``python -m traxla.as_jax``), so JAX's own kernel files are traxla's kernels there:

    python benchmarks/pallas_tpu_bench.py [--quick] [--out results.json]
                                          [--parts matmul flash_fwd_2k flash_fwd_8k flash_fwdbwd_8k]

Parts (each in its own try/except: a failure prints the error and the rest go on; a worker
writes its figures after each part, so one stopped by the time limit still reports):

- ``matmul``: a blocked bf16 matmul kernel, 8192^3 (an f32 accumulator in VMEM scratch,
  init and finalize under ``pl.when``, dimension semantics parallel, parallel, arbitrary),
  at the block sizes (bm, bk, bn) a user would try: (512, 1024, 1024), (1024, 512, 1024),
  (512, 512, 512); TFLOP/s of each and of the best;
- ``flash_fwd_2k``, ``flash_fwd_8k``: JAX's flash attention (jax.experimental.pallas.ops.
  tpu.flash_attention), causal, batch 2, 16 heads, head dim 128, bf16, 512-blocks, forward at
  S = 2048 and 8192;
- ``flash_fwdbwd_8k``: the same at S = 8192, forward and backward (its custom_vjp kernels:
  the output and dq, dk, dv for a fixed cotangent).

Times are medians over rounds of calls kept in flight (one wait per round), after a warm-up
call (whose time, trace + compile + run, is reported as ``first_call_s``). TFLOP/s of flash
attention count model FLOPs: causal forward 2·B·H·S²·D (half of 4·B·H·S²·D), backward 2.5
times that. Every part checks max |traxla - JAX| over the whole output (JAX's outputs are
saved by its worker, compared by traxla's). ``--quick``: small sizes (a smoke run);
``--interpret`` also runs the kernels in TPU interpret mode (a smoke run on a CPU). The
JSON (``--out``) holds both sides' figures and, per figure, the ratio traxla/JAX."""
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

PARTS = ("matmul", "flash_fwd_2k", "flash_fwd_8k", "flash_fwdbwd_8k")
MATMUL_BLOCKS = ((512, 1024, 1024), (1024, 512, 1024), (512, 512, 512))
WORKER_TIMEOUT_S = 420


def _sizes(quick):
    if quick:
        return {"matmul_n": 1024, "blocks": ((512, 1024, 1024), (256, 256, 256)),
                "batch": 1, "heads": 2, "s_short": 256, "s_long": 512, "block": 128,
                "rounds": 2, "calls": 2}
    return {"matmul_n": 8192, "blocks": MATMUL_BLOCKS, "batch": 2, "heads": 16,
            "s_short": 2048, "s_long": 8192, "block": 512, "rounds": 5, "calls": 10}


def _worker(side, quick, interpret, parts, ref_dir, out_path):
    import contextlib

    import jax  # traxla under the drop-in (the traxla worker runs under traxla.as_jax)
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas.ops.tpu import flash_attention as fa

    cfg = _sizes(quick)
    results = {"side": side, "devices": [str(d) for d in jax.devices()], "parts": {}}
    mode = pltpu.force_tpu_interpret_mode() if interpret else contextlib.nullcontext()

    def timed(f, *args):
        """(first call's seconds, median seconds per call, the first call's output)."""
        t0 = time.perf_counter()
        out = jax.block_until_ready(f(*args))
        first = time.perf_counter() - t0
        per_call = []
        for _ in range(cfg["rounds"]):
            t0 = time.perf_counter()
            last = [f(*args) for _ in range(cfg["calls"])][-1]
            jax.block_until_ready(last)
            per_call.append((time.perf_counter() - t0) / cfg["calls"])
        return first, statistics.median(per_call), out

    def check(name, outs):
        """Saves JAX's outputs; compares traxla's with them: max |diff| (and the scale)."""
        leaves = [np.asarray(o) for o in jax.tree_util.tree_leaves(outs)]
        if side == "jax":  # (bf16 saved as its bits: half the bytes of f32)
            for i, x in enumerate(leaves):
                np.save(os.path.join(ref_dir, f"{name}_{i}.npy"),
                        x.view(np.uint16) if x.dtype == jnp.bfloat16 else x)
            return {"max_abs_output": max(float(np.abs(x.astype(np.float32)).max())
                                          for x in leaves)}
        diffs = []
        for i, x in enumerate(leaves):
            path = os.path.join(ref_dir, f"{name}_{i}.npy")
            if not os.path.exists(path):
                return {"max_abs_diff_vs_jax": None, "note": "no JAX output to compare"}
            want = np.load(path)
            if x.dtype == jnp.bfloat16:
                want = want.view(x.dtype)
            diffs.append(float(np.abs(x.astype(np.float32) - want.astype(np.float32)).max()))
        return {"max_abs_diff_vs_jax": max(diffs), "max_abs_diff_per_output": diffs}

    def matmul_part():
        n = cfg["matmul_n"]
        rng = np.random.default_rng(0)
        x = jnp.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32), jnp.bfloat16)
        y = jnp.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32), jnp.bfloat16)

        def kernel(x_ref, y_ref, o_ref, acc_ref):
            @pl.when(pl.program_id(2) == 0)
            def _():
                acc_ref[...] = jnp.zeros_like(acc_ref)

            acc_ref[...] += jnp.dot(x_ref[...], y_ref[...],
                                    preferred_element_type=jnp.float32)

            @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
            def _():
                o_ref[...] = acc_ref[...].astype(o_ref.dtype)

        out = {}
        for bm, bk, bn in cfg["blocks"]:
            f = jax.jit(pl.pallas_call(
                kernel, out_shape=jax.ShapeDtypeStruct((n, n), jnp.bfloat16),
                grid_spec=pltpu.PrefetchScalarGridSpec(
                    num_scalar_prefetch=0, grid=(n // bm, n // bn, n // bk),
                    in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                              pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
                    out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
                    scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)]),
                compiler_params=pltpu.CompilerParams(
                    dimension_semantics=("parallel", "parallel", "arbitrary"))))
            key = f"{bm}x{bk}x{bn}"
            try:
                first, t, o = timed(f, x, y)
                out[key] = {"tflops": 2 * n ** 3 / t / 1e12, "ms": t * 1e3,
                            "first_call_s": first, **check(f"matmul_{key}", o)}
            except Exception as e:  # noqa: BLE001 - one block size failing is a figure
                traceback.print_exc()
                out[key] = {"error": f"{type(e).__name__}: {e}"[:1500]}
        ok = [v["tflops"] for v in out.values() if "tflops" in v]
        out["best_tflops"] = max(ok) if ok else None
        out["n"] = n
        return out

    def qkv(s):
        rng = np.random.default_rng(1)
        shape = (cfg["batch"], cfg["heads"], s, 128)
        return [jnp.asarray(rng.standard_normal(shape).astype(np.float32), jnp.bfloat16)
                for _ in range(4)]

    def block_sizes():
        b = cfg["block"]
        return fa.BlockSizes(block_q=b, block_k_major=b, block_k=b, block_b=1,
                             block_q_major_dkv=b, block_k_major_dkv=b, block_k_dkv=b,
                             block_q_dkv=b, block_k_major_dq=b, block_k_dq=b, block_q_dq=b)

    def flash(q, k, v):
        return fa.flash_attention(q, k, v, causal=True, sm_scale=1.0 / np.sqrt(128),
                                  block_sizes=block_sizes())

    def fwd_flops(s):
        return 2 * cfg["batch"] * cfg["heads"] * s * s * 128

    def flash_fwd_part(s):
        q, k, v, _ = qkv(s)
        first, t, o = timed(jax.jit(flash), q, k, v)
        return {"s": s, "ms": t * 1e3, "tflops": fwd_flops(s) / t / 1e12,
                "first_call_s": first, **check(f"flash_fwd_{s}", o)}

    def flash_fwdbwd_part(s):
        q, k, v, do = qkv(s)

        def fwd_bwd(q, k, v, do):
            o, vjp = jax.vjp(flash, q, k, v)
            return (o, *vjp(do))

        first, t, outs = timed(jax.jit(fwd_bwd), q, k, v, do)
        return {"s": s, "ms": t * 1e3, "tflops": 3.5 * fwd_flops(s) / t / 1e12,
                "first_call_s": first, **check(f"flash_fwdbwd_{s}", outs)}

    fns = {"matmul": matmul_part,
           "flash_fwd_2k": lambda: flash_fwd_part(cfg["s_short"]),
           "flash_fwd_8k": lambda: flash_fwd_part(cfg["s_long"]),
           "flash_fwdbwd_8k": lambda: flash_fwdbwd_part(cfg["s_long"])}
    with mode:
        for part in parts:
            print(f"[{side}] {part} ...", flush=True)
            try:
                results["parts"][part] = fns[part]()
            except Exception as e:  # noqa: BLE001 - a failing part is reported, not fatal
                traceback.print_exc()
                results["parts"][part] = {"error": f"{type(e).__name__}: {e}"[:2000]}
            print(f"[{side}] {part}: {json.dumps(results['parts'][part])}", flush=True)
            with open(out_path, "w") as fh:
                json.dump(results, fh)


def _ratios(ours, theirs):
    """Per figure: traxla / JAX (TFLOP/s: below 1 is slower; ms: above 1 is slower)."""
    out = {}
    for key, value in ours.items():
        other = theirs.get(key) if isinstance(theirs, dict) else None
        if isinstance(value, dict):
            sub = _ratios(value, other or {})
            if sub:
                out[key] = sub
        elif key in ("tflops", "ms", "best_tflops") and isinstance(value, (int, float)) \
                and isinstance(other, (int, float)) and other:
            out[key] = value / other
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--interpret", action="store_true",
                        help="kernels in TPU interpret mode (a smoke run on a CPU)")
    parser.add_argument("--out", default=None, help="write the JSON results here")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--worker", choices=("jax", "traxla"), help=argparse.SUPPRESS)
    parser.add_argument("--ref-dir", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args.worker, args.quick, args.interpret, args.parts, args.ref_dir,
                       args.worker_out)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PYTHONUNBUFFERED="1")
    results = {"quick": args.quick, "interpret": args.interpret}
    with tempfile.TemporaryDirectory() as tmp:
        for side in ("jax", "traxla"):
            prefix = [sys.executable] + (["-m", "traxla.as_jax"] if side == "traxla" else [])
            worker_out = os.path.join(tmp, f"{side}.json")
            cmd = prefix + [os.path.abspath(__file__), "--worker", side, "--ref-dir", tmp,
                            "--worker-out", worker_out, "--parts", *args.parts] + \
                (["--quick"] if args.quick else []) + (["--interpret"] if args.interpret
                                                        else [])
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                                      timeout=WORKER_TIMEOUT_S)
                print(proc.stdout[-6000:])
                if proc.returncode:
                    print(f"{side} worker exited {proc.returncode}:", proc.stderr[-4000:])
            except subprocess.TimeoutExpired:
                print(f"{side} worker stopped after {WORKER_TIMEOUT_S} s")
            if os.path.exists(worker_out):
                with open(worker_out) as fh:
                    results[side] = json.load(fh)
            else:
                results[side] = {"error": "the worker wrote no figures"}
            results[side]["wall_s"] = time.perf_counter() - t0
            time.sleep(3)  # (the chip can refuse a process started right after another)
    results["ratio_traxla_over_jax"] = _ratios(results["traxla"].get("parts", {}),
                                               results["jax"].get("parts", {}))
    text = json.dumps(results, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
