"""Step time of examples/cnn.py's jitted SGD update under traxla and under JAX, measured
in the same process (the JAX program is the same file with its imports switched).

    python benchmarks/bench_cnn.py [--batch 32] [--steps 30] [--repeats 5] [--json out.json]

Reports the median over ``--repeats`` (traxla and JAX alternating) of the mean time of
``--steps`` calls of the compiled ``update`` (each followed by ``block_until_ready``), the
time of the first (compiling) call, and the traxla/JAX ratios. Runs in well under 60 s on 2 cores.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT / "tests"))
sys.path.insert(0, str(_ROOT))

from test_examples_cnn import _SOURCE, _load, jax_source  # noqa: E402


def _block(tree):
    import jax
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()


def compiled_update(module, batch):
    """The module's jitted update after its first (compiling) call, and that call's time."""
    params = module.init_params()
    update = module.make_update(0.01)
    start = time.perf_counter()
    params = update(params, batch)
    _block(params)
    return update, params, time.perf_counter() - start


def measure(update, params, batch, steps):
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        params = update(params, batch)
        _block(params)
        times.append(time.perf_counter() - start)
    return statistics.mean(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    ours, theirs = _load(_SOURCE, "cnn_traxla"), _load(jax_source(), "cnn_jax")
    images, labels = ours.synthetic_mnist(args.batch)
    batch = (images, labels)
    compiled = {"traxla": compiled_update(ours, batch), "jax": compiled_update(theirs, batch)}
    rows = {"traxla": [], "jax": []}
    for r in range(args.repeats):
        names = ["traxla", "jax"] if r % 2 == 0 else ["jax", "traxla"]
        for name in names:
            update, params, _ = compiled[name]
            rows[name].append(measure(update, params, batch, args.steps))
    step = {k: statistics.median(v) for k, v in rows.items()}
    comp = {k: v[2] for k, v in compiled.items()}
    ratio = step["traxla"] / step["jax"]
    print(f"CNN SGD step (batch {args.batch}, 28x28x1, conv8-maxpool-conv16-avgpool-dense)")
    print(f"{'':24s}{'traxla':>12s}{'jax':>12s}{'ratio':>8s}")
    print(f"{'step (ms, median)':24s}{step['traxla'] * 1e3:12.2f}{step['jax'] * 1e3:12.2f}"
          f"{ratio:8.2f}")
    print(f"{'first call (s)':24s}{comp['traxla']:12.2f}{comp['jax']:12.2f}"
          f"{comp['traxla'] / comp['jax']:8.2f}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"step_s": step, "first_call_s": comp, "ratio": ratio, "batch": args.batch}))
    return ratio


if __name__ == "__main__":
    main()
