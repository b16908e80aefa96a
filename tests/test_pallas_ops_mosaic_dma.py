"""JAX's own Pallas TPU kernels that move their own memory (issue #42, item 2): each is
imported from JAX's installed files under the drop-in (a subprocess of
``python -m traxla.as_jax``, as tests/test_pallas_ops.py) and exported for ``("tpu",)`` on
the CPU; its Mosaic module (the backend config, the op multiset, the call's and functions'
attributes, the text without locations) is JAX's export of the same call. JAX's side is
stored (tests/_jax_stored.py), the text as a hash.

- ``example_kernel.double``;
- ``paged_attention`` (HBM pages DMA'd into double buffers through ``ref.at[..].at[..]``
  chains, ``None`` inputs and scratch shapes, scalar prefetch);
- ``all_gather`` on a one-device mesh (JAX's function returns its input without a kernel
  there: the module has no Mosaic call, as JAX's).

Not yet: ``ragged_paged_attention`` (its DMA wait returns a ref view that it
``.reshape``s and reads with strided ``pl.ds``: ref reshapes in a compiled kernel are not
implemented), ``all_gather``'s kernel on a mesh of more than one device."""
from __future__ import annotations

import collections
import hashlib
import json
import os
import subprocess
import sys

import pytest

from test_pallas_mosaic import _custom_call

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXPORTS = '''
import numpy as np
import jax


def exports():
    rng = np.random.RandomState(0)
    r = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    out = {}
    from jax.experimental.pallas.ops.tpu import example_kernel
    out["double"] = (example_kernel.double, (r(8, 128),))
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention
    pages = rng.permutation(16)[:8].reshape(2, 4).astype(np.int32)
    out["paged_attention"] = (
        lambda *a: paged_attention(*a, pages_per_compute_block=4),
        (r(2, 2, 128), r(1, 16, 16, 128), r(1, 16, 16, 128), np.array([20, 50], np.int32),
         pages))
    from jax.experimental.pallas.ops.tpu.all_gather import all_gather
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",))
    out["all_gather_one_device"] = (lambda x: all_gather(x, mesh=mesh, axis_name="x"),
                                    (r(8, 128),))
    return {name: jax.export.export(jax.jit(f), platforms=("tpu",))(*args).mlir_module()
            for name, (f, args) in out.items()}
'''


def _summary(text):
    """The Mosaic call of a module as JSON-able records (the text as its hash); None for a
    module without one."""
    if "@tpu_custom_call" not in text:
        return None
    config, ops, attrs, asm = _custom_call(text)
    return {"config": json.dumps(config, sort_keys=True), "ops": dict(sorted(ops.items())),
            "attrs": json.dumps(attrs, sort_keys=True),
            "asm": hashlib.sha256(asm.encode()).hexdigest()}


def _jax_exports():
    namespace = {}
    exec(compile(EXPORTS, "<exports>", "exec"), namespace)
    return {name: _summary(text) for name, text in namespace["exports"]().items()}


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    path = tmp_path_factory.mktemp("exports") / "exports.py"
    path.write_text(EXPORTS + "\nimport json, sys\njson.dump(exports(), sys.stdout)\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "traxla.as_jax", str(path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_jax_dma_kernels_export_jax_mosaic_modules(ours, jax_side):
    theirs = jax_side(_jax_exports)
    assert sorted(ours) == sorted(theirs)
    for name, want in theirs.items():
        got = _summary(ours[name])
        if want is None:
            assert got is None, name
            continue
        assert got is not None, name
        mine, their_ops = collections.Counter(got["ops"]), collections.Counter(want["ops"])
        assert mine == their_ops, (name, mine - their_ops, their_ops - mine)
        assert got["config"] == want["config"], name
        assert got["attrs"] == want["attrs"], name
        assert got["asm"] == want["asm"], name
    assert theirs["paged_attention"]["ops"]["tpu.enqueue_dma"] >= 8
