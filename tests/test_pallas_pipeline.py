"""``pltpu.emit_pipeline`` (issue #42): kernels that pipeline their own DMAs inside a
``pallas_call`` (tests/_pallas_pipeline_kernels.py: the pipelining page's add and dynamic
block shapes, a block matmul, buffers allocated once and reused, three buffers, lookahead,
a nested pipeline, a last block cut to whole tiles, synchronous copies, whole-array blocks
copied once, the grid split among cores, blocks in SMEM, Element and squeezed block
dimensions).

The DMA slices depend on the TPU's tiling, which JAX and traxla read from the device: on a
CPU both refuse (``ValueError: Unsupported TPU device kind: cpu``, what JAX's docs run on a
CPU records). With the device kind set to a TPU v5e (JAX's and traxla's lookups patched
alike), each kernel is exported for ``("tpu",)`` by JAX and by traxla and the Mosaic
modules are the same text (locations aside), as in tests/test_pallas_mosaic.py; and
traxla's interpret mode runs the pipelines with NumPy's results. The chip run is in
tests/test_tpu_pallas.py."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import export as texport
from traxla.experimental import pallas as tpl
from traxla.experimental.pallas import tpu as tpltpu
from traxla.experimental.pallas import tpu_pipeline

import _pallas_pipeline_kernels as kernels
from test_pallas_mosaic import _custom_call

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

TRAXLA = kernels.pipeline_kernels(traxla, tnp, tpl, tpltpu)
JAX = kernels.pipeline_kernels(jax, jjnp, jpl, jpltpu)
INTERPRETED = kernels.pipeline_kernels(traxla, tnp, tpl, tpltpu, interpret=True)


@pytest.fixture
def tpu_v5e(monkeypatch):
    """JAX's and traxla's device-kind lookups answer a TPU v5e."""
    monkeypatch.setattr(jax_tpu_info, "get_device_kind", lambda: "TPU v5 lite")
    monkeypatch.setattr(jax_tpu_info, "get_num_device_cores", lambda: 1)
    monkeypatch.setattr(tpu_pipeline, "_device_kind", lambda: "TPU v5 lite")
    jax_tpu_info.get_tpu_info.cache_clear()
    yield
    jax_tpu_info.get_tpu_info.cache_clear()


@pytest.mark.parametrize("name", sorted(TRAXLA))
def test_mosaic_module_matches_jax(name, tpu_v5e):
    fn, args = TRAXLA[name]
    ours = _custom_call(texport.export(traxla.jit(fn), platforms=("tpu",))(*args)
                        .mlir_module())
    theirs = _custom_call(jax.export.export(jax.jit(JAX[name][0]), platforms=("tpu",))(
        *args).mlir_module())
    assert ours[1] == theirs[1], (ours[1] - theirs[1], theirs[1] - ours[1])
    assert ours[0] == theirs[0]
    assert ours[2] == theirs[2]
    assert ours[3] == theirs[3]


# (lookahead and a nested pipeline, whose inner blocks are views of the outer one's; blocks
# of traced size, BoundedSlice's: every kernel runs compiled on the chip,
# tests/test_tpu_pallas.py)
@pytest.mark.parametrize("name", ["pipeline_nested_lookahead", "pipeline_dynamic_block"])
def test_interpret_mode_runs_the_pipeline(name, tpu_v5e):
    fn, args = INTERPRETED[name]
    got = traxla.tree_util.tree_leaves(traxla.jit(fn)(*args))
    want = traxla.tree_util.tree_leaves(kernels.reference(name, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-4)


def test_interpret_mode_reads_no_slice_of_traced_size():
    def kernel(n_ref, x_ref, o_ref):
        o_ref[...] = x_ref.at[tpl.ds(0, n_ref[0])][...]

    f = tpl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((8, 128), tnp.float32),
                        in_specs=[tpl.BlockSpec(memory_space=tpltpu.SMEM),
                                  tpl.BlockSpec(memory_space=tpl.ANY)], interpret=True)
    with pytest.raises(NotImplementedError, match="interpret mode: reading, writing or "
                                                  "indexing further a `pl.ds` slice of a ref "
                                                  "with a traced size"):
        traxla.jit(f)(np.array([4], np.int32), np.ones((8, 128), np.float32))


def test_on_a_cpu_the_device_kind_is_refused():
    jax_tpu_info.get_tpu_info.cache_clear()
    # (fresh functions: no trace of them made under the patched device kind is reused)
    fn, args = kernels.pipeline_kernels(traxla, tnp, tpl, tpltpu)["pipeline_dynamic_block"]
    with pytest.raises(ValueError, match="^Unsupported TPU device kind: cpu"):
        texport.export(traxla.jit(fn), platforms=("tpu",))(*args)
    jfn = kernels.pipeline_kernels(jax, jjnp, jpl, jpltpu)["pipeline_dynamic_block"][0]
    with pytest.raises(ValueError, match="^Unsupported TPU device kind: cpu"):
        jax.export.export(jax.jit(jfn), platforms=("tpu",))(*args)
    # (in interpret mode too, JAX's as traxla's)
    fn, args = kernels.pipeline_kernels(traxla, tnp, tpl, tpltpu, True)["pipeline_add"]
    with pytest.raises(ValueError, match="^Unsupported TPU device kind: cpu"):
        traxla.jit(fn)(*args)
    jfn = kernels.pipeline_kernels(jax, jjnp, jpl, jpltpu, True)["pipeline_add"][0]
    with pytest.raises(ValueError, match="^Unsupported TPU device kind: cpu"):
        jax.jit(jfn)(*args)


def test_buffered_ref_is_a_pytree_of_its_buffers_and_slots(tpu_v5e):
    spec = tpl.BlockSpec((8, 128), lambda i: (i, 0))
    bref = tpltpu.BufferedRef.input(spec, traxla.ShapeDtypeStruct((32, 128), tnp.float32))
    window, sems = traxla.tree_util.tree_leaves(bref)
    assert window.inner_aval.shape == (2, 8, 128) and bref.buffer_count == 2
    assert bref.is_input and not bref.is_output and bref.is_buffered
    assert bref.buffer_type is tpltpu.BufferType.INPUT
    out = tpltpu.BufferedRef.output(spec, traxla.ShapeDtypeStruct((32, 128), tnp.float32),
                                    buffer_count=1)
    assert out.sem_recvs is None and out.sem_sends is not None
    with pytest.raises(NotImplementedError, match="Buffer count >2 not supported for output"):
        tpltpu.BufferedRef.output(spec, traxla.ShapeDtypeStruct((32, 128), tnp.float32),
                                  buffer_count=3)
    with pytest.raises(ValueError, match="strictly positive"):
        tpltpu.emit_pipeline(lambda *r: None, grid=(0,))


def test_a_pipeline_takes_one_ref_per_block_spec(tpu_v5e):
    spec = tpl.BlockSpec((8, 128), lambda i: (i, 0))
    pipeline = tpltpu.emit_pipeline(lambda x, o: None, grid=(4,), in_specs=[spec],
                                    out_specs=spec)

    def kernel(x_hbm, o_hbm):
        pipeline(x_hbm)

    f = tpl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((32, 128), tnp.float32),
                        in_specs=[tpl.BlockSpec(memory_space=tpl.ANY)],
                        out_specs=tpl.BlockSpec(memory_space=tpl.ANY))
    with pytest.raises(ValueError, match="emit_pipeline has 2 block specs .*got 1 refs"):
        texport.export(traxla.jit(f), platforms=("tpu",))(np.zeros((32, 128), np.float32))
    with pytest.raises(TypeError, match="takes the kernel's refs"):
        pipeline(np.zeros((32, 128), np.float32), np.zeros((32, 128), np.float32))
