"""JAX's own Pallas TPU kernels that move their own memory (issue #42, item 2): each is
imported from JAX's installed files under the drop-in (a subprocess of
``python -m traxla.as_jax``, as tests/test_pallas_ops.py) and exported for ``("tpu",)`` on
the CPU; its Mosaic module (the backend config, the op multiset, the call's and functions'
attributes, the text without locations) is JAX's export of the same call. JAX's side is
stored (tests/_jax_stored.py), the text as a hash.

- ``example_kernel.double``;
- ``paged_attention`` (HBM pages DMA'd into double buffers through ``ref.at[..].at[..]``
  chains, ``None`` inputs and scratch shapes, scalar prefetch);
- ``ragged_paged_attention`` (v2, what 0.10.2 ships: a DMA'd buffer ``.reshape``d and read
  with strided ``pl.ds`` (``tpu.memref_reshape``, ``tpu.strided_load``), ``pltpu.store``
  with a mask (a masked ``tpu.vector_store``), ``sign`` of integers, ``scf.while``);
- a kernel of ``sign`` (f32 and i32 vectors);
- ``all_gather`` on a one-device mesh (JAX's function returns its input without a kernel
  there: the module has no Mosaic call, as JAX's).

Not here: ``all_gather``'s kernel, which runs only on a mesh of more than one device."""
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
    from jax.experimental.pallas.ops.tpu import ragged_paged_attention as rpa
    out["ragged_paged_attention"] = (
        lambda *a: rpa.ragged_paged_attention(*a, num_kv_pages_per_block=2,
                                              num_queries_per_block=8,
                                              vmem_limit_bytes=32 * 1024 * 1024),
        (r(16, 2, 128), r(16, 16, 2, 128), np.array([20, 30], np.int32), pages,
         np.array([0, 8, 16], np.int32), np.array([2], np.int32)))
    from jax.experimental import pallas as pl

    def sign_kernel(x_ref, i_ref, o_ref, j_ref):  # (ragged's integer sign, and f32's)
        o_ref[...] = jax.numpy.sign(x_ref[...])
        j_ref[...] = jax.numpy.sign(i_ref[...])
    x, i = r(8, 128), np.arange(-512, 512, dtype=np.int32).reshape(8, 128)
    out["sign"] = (pl.pallas_call(sign_kernel, out_shape=(x, i)), (x, i))
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
    # JAX's Mosaic lowering of `sign` asks the chip's generation (for bf16), which a CPU
    # host lacks: its registry of device kinds gets "cpu" as a v5e while JAX exports
    from jax._src.pallas.mosaic import tpu_info
    tpu_info.registry["cpu"] = lambda: tpu_info._get_tpu_info_impl(
        tpu_info.ChipVersion.TPU_V5E, 1)
    try:
        namespace = {}
        exec(compile(EXPORTS, "<exports>", "exec"), namespace)
        return {name: _summary(text) for name, text in namespace["exports"]().items()}
    finally:
        del tpu_info.registry["cpu"]


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
    assert theirs["ragged_paged_attention"]["ops"]["tpu.memref_reshape"] == 2


def test_reshaped_ref_view_outside_a_compiled_kernel():
    """``ref.at[...].reshape(...)`` has its shape anywhere; it is read or written only in a
    compiled Pallas TPU kernel (elsewhere a NotImplementedError naming that)."""
    import numpy as np

    import traxla
    ref = traxla.new_ref(np.arange(32, dtype=np.float32).reshape(4, 8))
    view = ref.at[0:2].reshape(2, 2, 4)
    assert view.shape == (2, 2, 4) and ref.at[1:3].at[0].shape == (8,)
    with pytest.raises(NotImplementedError, match="reshaped ref view .* compiled Pallas TPU"):
        view[...]
    with pytest.raises(ValueError, match=r"Cannot reshape a ref of shape \(2, 8\) to \(3, 3\)"):
        ref.at[0:2].reshape(3, 3)
    np.testing.assert_array_equal(ref.at[1:3].at[0][...], np.arange(8, 16))
