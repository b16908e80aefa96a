"""Cold versus warm start with the persistent compilation cache: the MNIST example's first
jitted SGD step, each in a fresh process, the second finding the executables on disk.

    python benchmarks/cache_startup.py            # prints the table (about 10 s)

``--child DIR`` is one process: it runs the first step with the cache in DIR and prints a
JSON line with the step's wall time, the cache's counters and a checksum of the result.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(cache_dir, sizes):
    start_process = time.perf_counter()
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    import numpy as np
    import traxla
    from traxla.runtime import compilation_cache
    import mnist_classifier as ex
    traxla.config.update("jax_compilation_cache_dir", cache_dir)
    traxla.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    images, labels, _, _ = ex.synthetic_mnist(128, 16)
    params = ex.init_random_params(0.1, sizes)

    @traxla.jit
    def update(params, batch):
        grads = traxla.grad(ex.loss)(params, batch)
        return [(w - 0.001 * dw, b - 0.001 * db) for (w, b), (dw, db) in zip(params, grads)]

    start = time.perf_counter()
    new = update(params, (images, labels))
    traxla.block_until_ready(new)
    step = time.perf_counter() - start
    checksum = float(sum(np.asarray(w).sum() + np.asarray(b).sum() for w, b in new))
    print(json.dumps({"first_step_s": step, "process_s": time.perf_counter() - start_process,
                      "stats": dict(compilation_cache.stats), "checksum": checksum}))


def run_pair(cache_dir, sizes):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", cache_dir,
           "--sizes", ",".join(map(str, sizes))]
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = []
    for _ in range(2):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr[-3000:])
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", default=None)
    parser.add_argument("--sizes", default="784,1024,1024,10")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    if args.child:
        child(args.child, sizes)
        return
    with tempfile.TemporaryDirectory() as d:
        cold, warm = run_pair(d, sizes)
    print("| start | first jitted step | whole process | cache hits / misses |")
    print("|---|---|---|---|")
    for name, r in (("cold (empty cache)", cold), ("warm (cache filled)", warm)):
        print(f"| {name} | {r['first_step_s'] * 1e3:.0f} ms | {r['process_s']:.2f} s | "
              f"{r['stats']['hits']} / {r['stats']['misses']} |")
    assert cold["checksum"] == warm["checksum"]


if __name__ == "__main__":
    main()
