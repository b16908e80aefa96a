"""Pallas kernels compiled by traxla's Mosaic lowering and run on the TPU
(tools/tpu_check.sh; skipped without a chip): each kernel of tests/_pallas_kernels.py,
compiled, agrees with the same kernel in interpret mode (traxla operations, on the same
chip), on random inputs (``jvp_both`` is the JVP kernel, ``vmap_matmul`` the batched one);
then eager, jit and vmap calls and a custom_vjp kernel under grad."""
import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla.experimental import pallas as pl
from traxla.experimental.pallas import tpu as pltpu

from _pallas_dma_kernels import distributed_kernels, dma_kernels, doc_kernels
from _pallas_kernels import kernels, views

pytestmark = pytest.mark.tpu

COMPILED = kernels(traxla, tnp, pl, pltpu)
INTERPRETED = kernels(traxla, tnp, pl, pltpu, interpret=True)


def _random(args, seed=0):
    rng = np.random.default_rng(seed)
    return [a if np.issubdtype(a.dtype, np.integer)
            else rng.uniform(-1, 1, a.shape).astype(a.dtype) for a in args]


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_kernel_agrees_with_interpret_mode(name):
    fn, args = COMPILED[name]
    args = _random(args)
    got = traxla.jit(fn)(*args)
    if name == "strided":  # (interpret mode has no strided stores into a ref)
        x = args[0]
        want = np.empty_like(x)
        want[1::2], want[0::2] = 3.0 * x[0::2], x[0::2]
    elif name == "vmap_matmul":  # (interpret mode cannot vmap a kernel with scratch)
        one = traxla.jit(INTERPRETED["matmul"][0])
        want = np.stack([np.asarray(one(x, args[1])) for x in args[0]])
    else:
        want = traxla.jit(INTERPRETED[name][0])(*args)
    for g, w in zip(traxla.tree_util.tree_leaves(got), traxla.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g, np.float32), np.asarray(w, np.float32),
                                   rtol=2e-2, atol=2e-2)


def _double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def _call(x):
    return pl.pallas_call(_double, out_shape=traxla.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_eager_jit_and_vmap_of_a_compiled_kernel():
    x = np.arange(3 * 8 * 128, dtype=np.float32).reshape(3, 8, 128)
    np.testing.assert_array_equal(_call(x[0]), 2 * x[0])
    np.testing.assert_array_equal(traxla.jit(_call)(x[1]), 2 * x[1])
    np.testing.assert_array_equal(traxla.vmap(_call)(x), 2 * x)


def test_custom_vjp_kernel_under_grad():
    @traxla.custom_vjp
    def f(x):
        return _call(x)

    f.defvjp(lambda x: (f(x), None), lambda _, g: (_call(g),))
    x = np.ones((8, 128), np.float32)
    np.testing.assert_array_equal(traxla.grad(lambda x: (f(x) * x).sum())(x),
                                  np.full((8, 128), 2.0 * 2.0, np.float32))


def test_views_with_traced_starts_agree_with_interpret_mode():
    fn, args = views(traxla, pl)
    args = _random(args)
    want = traxla.jit(views(traxla, pl, interpret=True)[0])(*args)
    np.testing.assert_allclose(np.asarray(traxla.jit(fn)(*args)), np.asarray(want),
                               rtol=1e-6, atol=1e-6)


DMA_COMPILED = {**dma_kernels(traxla, tnp, pl, pltpu), **doc_kernels(traxla, tnp, pl, pltpu)}
DMA_INTERPRETED = {**dma_kernels(traxla, tnp, pl, pltpu, interpret=True),
                   **doc_kernels(traxla, tnp, pl, pltpu, interpret=True)}


@pytest.mark.parametrize("name", sorted(DMA_COMPILED))
def test_compiled_dma_kernel_agrees_with_interpret_mode(name):
    """HBM refs, DMAs, semaphores and scoped allocations (issue #42, item 1) and the
    kernels of JAX's pipelining and sparse pages (item 4), compiled, against interpret mode
    (where DMAs copy at once and semaphores count)."""
    fn, args = DMA_COMPILED[name]
    args = _random(args)
    got = traxla.jit(fn)(*args)
    want = traxla.jit(DMA_INTERPRETED[name][0])(*args)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("name", ["doc_distributed_right_permute", "doc_distributed_all_gather",
                                  "doc_distributed_all_reduce",
                                  "doc_distributed_reduce_scatter"])
def test_distributed_page_kernels_on_one_chip(name):
    """docs/pallas/tpu/distributed.md's right permute, all-gather, all-reduce and
    reduce-scatter on a one-device mesh: each remote DMA and signal reaches the chip
    itself, so the result is the input (interpret mode does not reach other devices)."""
    fn, (x,) = distributed_kernels(traxla, tnp, pl, pltpu)[name]
    x = _random([x])[0]
    got = traxla.jit(fn)(x)
    got = np.asarray(got[0] if isinstance(got, tuple) else got)  # (all-reduce: the sum)
    np.testing.assert_array_equal(got.reshape(x.shape), x)
