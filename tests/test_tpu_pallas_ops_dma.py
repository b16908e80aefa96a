"""JAX's own DMA-using Pallas TPU kernels (issue #42, item 2) compiled by traxla and run on
the TPU (tools/tpu_check.sh; skipped without a chip): under the drop-in (a subprocess of
``python -m traxla.as_jax``), ``example_kernel.double``, ``paged_attention`` and
``ragged_paged_attention`` give their reference results: ``2 * x``, a NumPy grouped-query
attention over the pages, and the module's own ``ref_ragged_paged_attention``.
tests/test_pallas_ops_mosaic_dma.py checks their Mosaic modules against JAX's on the CPU."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.tpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = '''
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental.pallas.ops.tpu import example_kernel
from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention
from jax.experimental.pallas.ops.tpu import ragged_paged_attention as rpa

assert jax.devices()[0].platform == "tpu", jax.devices()
rng = np.random.RandomState(0)
r = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
out = {}
x = r(8, 128)
out["double"] = (np.asarray(jax.jit(example_kernel.double)(x)), 2 * x)

q, k, v = r(2, 2, 128), r(1, 16, 16, 128), r(1, 16, 16, 128)
lengths = np.array([20, 50], np.int32)
pages = rng.permutation(16)[:8].reshape(2, 4).astype(np.int32)
got = jax.jit(lambda *a: paged_attention(*a, pages_per_compute_block=4))(
    q, k, v, lengths, pages)
want = np.zeros_like(q)
for b in range(2):  # every query head reads the one kv head
    kk = k[0, pages[b]].reshape(-1, 128)[:lengths[b]].astype(np.float64)
    vv = v[0, pages[b]].reshape(-1, 128)[:lengths[b]].astype(np.float64)
    logits = q[b].astype(np.float64) @ kk.T
    p = np.exp(logits - logits.max(-1, keepdims=True))
    want[b] = (p / p.sum(-1, keepdims=True)) @ vv
out["paged_attention"] = (np.asarray(got), want)

args = (r(16, 2, 128), r(16, 16, 2, 128), np.array([20, 30], np.int32), pages,
        np.array([0, 8, 16], np.int32), np.array([2], np.int32))
got = jax.jit(lambda *a: rpa.ragged_paged_attention(
    *a, num_kv_pages_per_block=2, num_queries_per_block=8,
    vmem_limit_bytes=32 * 1024 * 1024))(*args)
want = rpa.ref_ragged_paged_attention(*args)
out["ragged_paged_attention"] = (np.asarray(got), np.asarray(want))
np.savez(OUT, **{f"{k}_{i}": a for k, v in out.items() for i, a in enumerate(v)})
'''

NAMES = ("double", "paged_attention", "ragged_paged_attention")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("ops") / "ops.py"
    npz = path.with_suffix(".npz")
    path.write_text(f"OUT = {str(npz)!r}\n" + SCRIPT)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "traxla.as_jax", str(path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return np.load(npz)


@pytest.mark.parametrize("name", NAMES)
def test_jax_dma_kernel_compiled_gives_its_reference(results, name):
    got, want = results[f"{name}_0"], results[f"{name}_1"]
    assert got.shape == want.shape and np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
