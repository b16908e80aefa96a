"""Pallas TPU kernels that move their own memory (issue #42, item 1) and those of JAX's
Pallas TPU pages (item 4), compiled for the TPU and checked without a chip: each kernel of
tests/_pallas_dma_kernels.py (HBM refs, DMAs, DMA and regular semaphores, ``pl.run_scoped``,
``sync_copy``; the pipelining, sparse and distributed pages' kernels, the last on a
one-device mesh: remote DMAs, ``lax.axis_index``) is exported for ``("tpu",)`` by JAX
and by traxla, and the Mosaic modules are the same text (locations aside), as in
tests/test_pallas_mosaic.py; then the errors such kernels raise."""
import re

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla import export as texport
from traxla.experimental import pallas as tpl
from traxla.experimental.pallas import tpu as tpltpu

from _pallas_dma_kernels import distributed_kernels, dma_kernels, doc_kernels
from test_pallas_mosaic import _custom_call

jax = pytest.importorskip("jax")
import jax.numpy as jjnp  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

TRAXLA = {**dma_kernels(traxla, tnp, tpl, tpltpu), **doc_kernels(traxla, tnp, tpl, tpltpu),
          **distributed_kernels(traxla, tnp, tpl, tpltpu)}
JAX = {**dma_kernels(jax, jjnp, jpl, jpltpu), **doc_kernels(jax, jjnp, jpl, jpltpu),
       **distributed_kernels(jax, jjnp, jpl, jpltpu)}
# (sparse.md's masked matmul and the distributed page's reduce-scatter read a ref only for
# its shape, `zeros_like(acc[...])`: the kernel DCE drops that load, JAX's as traxla's)
# (the distributed page's collectives: see test_matches_jax_but_identity_casts)
BUT_CASTS = ["doc_distributed_all_reduce", "doc_distributed_reduce_scatter"]
COMPARED = sorted(set(TRAXLA) - set(BUT_CASTS))


def _export(fn, *args):
    return texport.export(traxla.jit(fn), platforms=("tpu",))(*args)


@pytest.mark.parametrize("name", COMPARED)
def test_mosaic_module_matches_jax(name):
    fn, args = TRAXLA[name]
    ours = _custom_call(_export(fn, *args).mlir_module())
    jfn, _ = JAX[name]
    theirs = _custom_call(jax.export.export(jax.jit(jfn), platforms=("tpu",))(*args)
                          .mlir_module())
    assert ours[1] == theirs[1], (ours[1] - theirs[1], theirs[1] - ours[1])
    assert ours[0] == theirs[0]
    assert ours[2] == theirs[2]
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("name", BUT_CASTS)
def test_matches_jax_but_identity_casts(name):
    """The distributed page's all-reduce (a barrier semaphore of the call's collective_id,
    signals to the neighbours, a scoped REGULAR semaphore, remote and local DMAs): JAX's
    module also holds identity ``vector.shape_cast``s after some loads (inside a
    ``shard_map`` its avals carry the mesh, which the loaded vector's type lacks); all else
    is the same."""
    fn, args = TRAXLA[name]
    ours = _custom_call(_export(fn, *args).mlir_module())
    theirs = _custom_call(jax.export.export(jax.jit(JAX[name][0]), platforms=("tpu",))(
        *args).mlir_module())
    casts = sum(a == b for a, b in re.findall(r"vector\.shape_cast %\d+ : (\S+) to (\S+)\n",
                                              theirs[3]))
    assert casts
    assert theirs[1] - ours[1] == {"vector.shape_cast": casts} and not ours[1] - theirs[1]
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    assert ours[0]["custom_call_config"]["collective_id"] == 0


def _hbm_call(kernel, x, scratch=(), out_specs=None):
    kwargs = {} if out_specs is None else {"out_specs": out_specs}
    return tpl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype),
                           in_specs=[tpl.BlockSpec(memory_space=tpl.ANY)],
                           scratch_shapes=list(scratch), **kwargs)


X = np.zeros((16, 128), np.float32)


def test_loading_an_hbm_ref_names_the_kernel_and_line():
    def hbm_load(x_hbm, o_ref):
        o_ref[...] = x_hbm[...]

    with pytest.raises(ValueError, match=r"Pallas kernel `hbm_load`: Mosaic cannot lower the "
                       r"operation `get` at .*test_pallas_mosaic_dma.py:\d+.*Loads are only "
                       r"allowed on VMEM and SMEM references. ANY memory space can only be "
                       r"accessed using async_copy."):
        _export(_hbm_call(hbm_load, X), X)


def test_dma_of_mismatched_shapes():
    def halves(x_hbm, o_ref, buf, sem):
        pltpu_copy = tpltpu.make_async_copy(x_hbm.at[tpl.ds(0, 8)], buf, sem)
        pltpu_copy.start()

    f = _hbm_call(halves, X, [tpltpu.VMEM((16, 128), tnp.float32), tpltpu.SemaphoreType.DMA])
    with pytest.raises(ValueError, match=r"Cannot copy a ref of shape \(8, 128\) into one of "
                                         r"shape \(16, 128\)") as info:
        _export(f, X)
    assert any("Pallas kernel `halves`" in n for n in getattr(info.value, "__notes__", []))


def test_dma_wait_on_a_regular_semaphore():
    def wrong_sem(x_hbm, o_ref, sem):
        tpltpu.make_async_copy(x_hbm, o_ref, sem).wait()

    f = _hbm_call(wrong_sem, X, [tpltpu.SemaphoreType.REGULAR])
    with pytest.raises(ValueError, match="dma_wait requires a DMA semaphore, but got a regular "
                                         "semaphore. Use pl.semaphore_wait"):
        _export(f, X)


def test_signal_on_an_array_of_semaphores_and_a_non_ref():
    def whole_array(x_ref, o_ref, sems):
        tpl.semaphore_signal(sems, 1)

    f = tpl.pallas_call(whole_array, out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype),
                        scratch_shapes=[tpltpu.SemaphoreType.REGULAR((2,))])
    with pytest.raises(ValueError, match=r"Cannot signal on a non-\(\)-shaped semaphore: "
                                         r"\(2,\)"):
        _export(f, X)

    def not_a_ref(x_ref, o_ref, sem):
        tpltpu.make_async_copy(x_ref[...], o_ref, sem).start()

    f = tpl.pallas_call(not_a_ref, out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype),
                        scratch_shapes=[tpltpu.SemaphoreType.DMA])
    with pytest.raises(ValueError, match="DMA source must be a Ref"):
        _export(f, X)


def test_unsupported_dma_and_semaphore_forms_name_the_capability():
    def adding(x_hbm, o_ref, buf, sem):
        tpltpu.async_copy(x_hbm, buf, sem, add=True).wait()

    f = _hbm_call(adding, X, [tpltpu.VMEM((16, 128), tnp.float32), tpltpu.SemaphoreType.DMA])
    with pytest.raises(NotImplementedError, match=r"Pallas kernel `adding`: Mosaic cannot lower"
                       r" the operation `dma_start` at .*: DMA with add=True is not supported"):
        _export(f, X)

    f = _hbm_call(adding, X, [tpltpu.SemaphoreType.BARRIER])
    with pytest.raises(NotImplementedError, match="`adding`: .*barrier semaphores"):
        _export(f, X)


# -- bad kernels (issue #42, item 6): the kernel, the operation and the user's line ----------

def _notes(info):
    return "\n".join(getattr(info.value, "__notes__", []))


def test_wrong_ref_rank_names_the_kernel_line():
    def rank_store(x_ref, o_ref):
        o_ref[...] = x_ref[...]  # (16, 128) into a (1, 16, 128) ref

    f = tpl.pallas_call(rank_store, out_shape=traxla.ShapeDtypeStruct((1, 16, 128), tnp.float32))
    with pytest.raises(ValueError, match=r"Invalid shape for `swap`.*Value shape: \(16, 128\)") \
            as info:
        _export(f, X)
    assert re.search(r"Pallas kernel `rank_store` at .*test_pallas_mosaic_dma.py:\d+ "
                     r"\(rank_store\), a pallas_call at", _notes(info))

    def rank_index(x_ref, o_ref):
        o_ref[0, 0, 0] = x_ref[0, 0]

    f = tpl.pallas_call(rank_index, out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype))
    with pytest.raises(ValueError, match=r"`indices` must not be longer than `shape`: "
                                         r"indices=\(0, 0, 0\), shape=\(16, 128\)") as info:
        _export(f, X)
    assert re.search(r"`rank_index` at .*test_pallas_mosaic_dma.py:\d+ \(rank_index\)",
                     _notes(info))


def test_index_map_of_wrong_arity_names_its_line():
    spec = tpl.BlockSpec((8, 128), lambda i: i)
    f = tpl.pallas_call(lambda x_ref, o_ref: None, name="arity",
                        out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype), grid=(2,),
                        in_specs=[spec], out_specs=tpl.BlockSpec((8, 128), lambda i: (i, 0)))
    with pytest.raises(ValueError, match=r"`arity`: the index map <lambda> at "
                       r".*test_pallas_mosaic_dma.py:\d+ of the block spec for inputs\[0\] "
                       r"returned 1 indices for an array of rank 2"):
        _export(f, X)


def test_vector_from_smem_and_scalar_into_vmem():
    def smem_vector(s_ref, o_ref):
        o_ref[...] = s_ref[...]

    f = tpl.pallas_call(smem_vector, out_shape=traxla.ShapeDtypeStruct((8, 128), tnp.float32),
                        in_specs=[tpl.BlockSpec(memory_space=tpltpu.SMEM)])
    with pytest.raises(ValueError, match=r"`smem_vector`: Mosaic cannot lower the operation "
                       r"`get` at .*test_pallas_mosaic_dma.py:\d+.*: Can only load scalars "
                       r"from SMEM"):
        _export(f, X[:8])


def test_remote_copy_outside_shard_map():
    def remote(x_hbm, o_hbm, send, recv):
        tpltpu.make_async_remote_copy(x_hbm, o_hbm, send, recv, device_id=(0,)).start()

    f = tpl.pallas_call(remote, out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype),
                        in_specs=[tpl.BlockSpec(memory_space=tpl.ANY)],
                        out_specs=tpl.BlockSpec(memory_space=tpl.ANY),
                        scratch_shapes=[tpltpu.SemaphoreType.DMA] * 2)
    with pytest.raises(ValueError, match=r"`remote`: Mosaic cannot lower the operation "
                       r"`dma_start` at .*: Cannot use communication in pallas_call without "
                       r"shard_map."):
        _export(f, X)


def test_scoped_vmem_counts_in_the_budget():
    def scoped(x_hbm, o_ref):
        def outer(a):
            pl_buf = tpl.run_scoped(lambda b: b[...], tpltpu.VMEM((16, 128), tnp.float32))
            o_ref[...] = pl_buf + a[...]
        tpl.run_scoped(outer, tpltpu.VMEM((16, 128), tnp.float32))

    # blocks 2 * 8 KiB, then two nested scopes of 8 KiB each: 32 KiB
    f = tpl.pallas_call(scoped, out_shape=traxla.ShapeDtypeStruct(X.shape, X.dtype),
                        in_specs=[tpl.BlockSpec(memory_space=tpl.ANY)],
                        compiler_params=tpltpu.CompilerParams(vmem_limit_bytes=30000))
    with pytest.raises(ValueError, match=r"`scoped` at .*pl.run_scoped allocations need 32768 "
                                         r"bytes of VMEM, over the budget of 30000 bytes"):
        _export(f, X)
