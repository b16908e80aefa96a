"""A Pallas kernel compiled by traxla (its own Mosaic lowering) vs by JAX, on a TPU, each
in its own process (one process at a time can hold a TPU):

    python benchmarks/pallas_tpu_bench.py          # both, then the ratio
    python benchmarks/pallas_tpu_bench.py traxla   # one side (prints a JSON line)

The kernel is the blocked matmul of tests/_pallas_kernels.py (an f32 accumulator in VMEM
scratch, init and finalize under ``pl.when``, dimension semantics parallel, parallel,
arbitrary) on bf16 4096^3 with 512-blocks: its TFLOP/s (median of 10 timed calls, after a
warm-up call), the first call's time (trace, lower, compile, run), and whether both sides'
results agree."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

N, BLOCK = 4096, 512


def _side(which):
    if which == "jax":
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import tpu as pltpu
    else:
        import traxla as jax
        import traxla.numpy as jnp
        from traxla.experimental import pallas as pl
        from traxla.experimental.pallas import tpu as pltpu
    import numpy as np

    def kernel(x_ref, y_ref, o_ref, acc_ref):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
        def _():
            o_ref[...] = acc_ref[...].astype(o_ref.dtype)

    b = BLOCK
    f = jax.jit(lambda x, y: pl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((N, N), x.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0, grid=(N // b, N // b, N // b),
            in_specs=[pl.BlockSpec((b, b), lambda i, j, k: (i, k)),
                      pl.BlockSpec((b, b), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((b, b), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((b, b), jnp.float32)]),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")))(x, y))
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.uniform(-1, 1, (N, N)).astype(np.float32)).astype(jnp.bfloat16)
    y = jnp.asarray(rng.uniform(-1, 1, (N, N)).astype(np.float32)).astype(jnp.bfloat16)
    t0 = time.perf_counter()
    out = f(x, y)
    out.block_until_ready()
    first = time.perf_counter() - t0
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        f(x, y).block_until_ready()
        times.append(time.perf_counter() - t0)
    sample = np.asarray(out[:8, :8].astype(jnp.float32)).tolist()
    print(json.dumps({"side": which, "tflops": 2 * N ** 3 / statistics.median(times) / 1e12,
                      "first_call_s": first, "sample": sample}))


def main():
    if len(sys.argv) > 1:
        return _side(sys.argv[1])
    results = {}
    for which in ("traxla", "jax"):
        env = dict(os.environ)
        out = subprocess.run([sys.executable, __file__, which], capture_output=True, text=True,
                             env=env, timeout=600)
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        if not lines:
            print(which, "failed:", out.stderr[-2000:])
            continue
        results[which] = json.loads(lines[-1])
        print(lines[-1])
        time.sleep(3)
    if len(results) == 2:
        t, j = results["traxla"], results["jax"]
        import numpy as np
        print(f"TFLOP/s traxla {t['tflops']:.1f} JAX {j['tflops']:.1f} "
              f"(ratio {t['tflops'] / j['tflops']:.2f}); first call traxla "
              f"{t['first_call_s']:.2f}s JAX {j['first_call_s']:.2f}s; results agree: "
              f"{np.allclose(t['sample'], j['sample'], rtol=1e-2, atol=1e-2)}")


if __name__ == "__main__":
    main()
