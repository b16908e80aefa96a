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
import _pallas_pipeline_kernels
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


def test_eager_calls_of_one_pallas_call_trace_its_kernel_once():
    """A pallas_call is a jit(inline=True), as JAX's is: called eagerly again with the same
    shapes, its kernel is neither traced nor lowered again (the Pallas sparse page's eager
    benchmark ran 5 ms a call slower than JAX's while it was)."""
    traces = []

    def kernel(x_ref, o_ref):
        traces.append(1)
        o_ref[...] = x_ref[...] + 1.0

    call = pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((8, 128), np.float32))
    x = np.zeros((8, 128), np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(call(x), x + 1.0)
    assert len(traces) == 1


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


# JAX's own TPU kernels (jax.experimental.pallas.ops.tpu) compiled by traxla under the
# drop-in (a subprocess: the drop-in makes `import jax` traxla), on the chip, against the
# reference functions of JAX's kernel files (or numpy), forward and backward, and paged
# attention (DMAs and semaphores) (issue #42, items 2 and 3). ``TRAXLA_OPS_INTERPRET=1`` runs the same script in interpret mode (on the
# CPU: what checks the script itself without a chip).
OPS_ON_CHIP = '''
import contextlib, importlib, os
import numpy as np
import jax
import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas.ops.tpu import flash_attention as fa, matmul
from jax.experimental.pallas.ops.tpu.splash_attention import (
    splash_attention_kernel as sk, splash_attention_mask as sm)
gmm = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")

mode = (pltpu.force_tpu_interpret_mode() if os.environ.get("TRAXLA_OPS_INTERPRET")
        else contextlib.nullcontext())
rng = np.random.default_rng(0)
r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731


def close(name, got, want, tol=2e-2):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
        err = np.abs(g - w).max() / (1 + np.abs(w).max())
        assert err < tol, (name, err)
    print(name, "ok")


def loss(f):
    return lambda *a: (f(*a) ** 2).sum()


with mode, jax.default_matmul_precision("float32"):
    x, y = r(256, 256), r(256, 128)
    close("matmul", jax.jit(lambda x, y: matmul.matmul(x, y, block_shape=(128, 128),
                                                       block_k=128))(x, y), x @ y)

    bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                       block_q_major_dkv=128, block_k_major_dkv=128, block_k_dkv=128,
                       block_q_dkv=128, block_k_major_dq=128, block_k_dq=128, block_q_dq=128)
    flash = lambda q, k, v: fa.flash_attention(q, k, v, causal=True, sm_scale=0.5,  # noqa
                                               block_sizes=bs)
    ref = lambda q, k, v: fa.mha_reference_no_custom_vjp(q, k, v, causal=True,  # noqa
                                                         sm_scale=0.5)
    q, k, v = r(1, 2, 256, 128), r(1, 2, 256, 128), r(1, 2, 256, 128)
    close("flash forward", jax.jit(flash)(q, k, v), ref(q, k, v))
    grads = jax.jit(jax.grad(loss(flash), argnums=(0, 1, 2)))(q, k, v)
    close("flash backward", grads, jax.grad(loss(ref), argnums=(0, 1, 2))(q, k, v))
    qs, ks, vs = (np.stack([a, a[:, ::-1]]) for a in (q, k, v))
    close("vmap flash", jax.jit(jax.vmap(flash))(qs, ks, vs), jax.vmap(ref)(qs, ks, vs))

    sbs = sk.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128, block_q_dkv=128,
                        block_kv_dkv=128, block_kv_dkv_compute=128, block_q_dq=128,
                        block_kv_dq=128)
    splash = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((256, 256))] * 2),
                                head_shards=1, q_seq_shards=1, block_sizes=sbs)
    sref = lambda q, k, v: fa.mha_reference_no_custom_vjp(  # noqa: E731
        q[None], k[None], v[None], causal=True)[0]
    q, k, v = q[0], k[0], v[0]
    close("splash forward", jax.jit(splash)(q, k, v), sref(q, k, v))
    close("splash backward", jax.jit(jax.grad(loss(splash), argnums=(0, 1, 2)))(q, k, v),
          jax.grad(loss(sref), argnums=(0, 1, 2))(q, k, v))

    sizes = np.array([100, 156], np.int32)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    lhs, rhs = r(256, 128), r(2, 128, 128)
    want = np.concatenate([lhs[a:b] @ rhs[g] for g, (a, b) in
                           enumerate(zip(starts[:-1], starts[1:]))])
    close("gmm", jax.jit(lambda a, b, s: gmm.gmm(a, b, s, tiling=(128, 128, 128)))(
        lhs, rhs, sizes), want)
    lhs_t, grad = r(128, 256), r(256, 128)
    want = np.stack([lhs_t[:, a:b] @ grad[a:b] for a, b in zip(starts[:-1], starts[1:])])
    close("tgmm", jax.jit(lambda a, b, s: gmm.tgmm(a, b, s, tiling=(128, 128, 128)))(
        lhs_t, grad, sizes), want)

    from jax.experimental import pallas as pl

    def sign_erf_inv(x_ref, b_ref, o_ref, ob_ref):  # (computed from other operations)
        o_ref[...] = jnp.sign(x_ref[...]) + jax.lax.erf_inv(x_ref[...] * 0.5)
        ob_ref[...] = jnp.sign(b_ref[...])

    x = np.concatenate([rng.uniform(-1, 1, (7, 128)), np.zeros((1, 128))]).astype(
        np.float32)
    b = jnp.asarray(x, jnp.bfloat16)
    got = jax.jit(pl.pallas_call(sign_erf_inv, out_shape=(
        jax.ShapeDtypeStruct((8, 128), jnp.float32),
        jax.ShapeDtypeStruct((8, 128), jnp.bfloat16))))(x, b)
    close("sign erf_inv", got, (np.sign(x) + jax.lax.erf_inv(jnp.asarray(x) * 0.5),
                                np.sign(x)), tol=1e-4)


# Paged attention outside default_matmul_precision("float32"): its kernel multiplies f32 q by
# bf16 pages, which Mosaic refuses at fp32 contract precision (JAX's module is the same).
with (pltpu.force_tpu_interpret_mode() if os.environ.get("TRAXLA_OPS_INTERPRET")
      else contextlib.nullcontext()):
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention, util
    pages = rng.permutation(16)[:8].reshape(2, 4).astype(np.int32)
    # bf16 pages, as JAX's own tests: the kernel casts a page to bf16 before its f32 x bf16
    # product, which Mosaic refuses for f32 pages (JAX emits the same module: same error).
    q = r(2, 2, 128)
    k_pages, v_pages = (jnp.asarray(r(1, 16, 16, 128), jnp.bfloat16) for _ in range(2))
    lengths = np.array([20, 50], np.int32)
    got = jax.jit(lambda *a: paged_attention(*a, pages_per_compute_block=4))(
        q, k_pages, v_pages, lengths, pages)
    gather = lambda p: np.stack([np.asarray(p, np.float32)[:, pages[b]].reshape(1, 64, 128)  # noqa: E731
                                 for b in range(2)])
    close("paged attention", got, util.grouped_query_attention_reference(
        q, gather(k_pages), gather(v_pages), lengths))
'''


def _run_under_drop_in(script_text, tmp_path, **env):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "script.py"
    script.write_text(script_text)
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **env)
    return subprocess.run([sys.executable, "-m", "traxla.as_jax", str(script)], env=env,
                          capture_output=True, text=True, timeout=600)


def test_jax_tpu_kernels_compiled_agree_with_jax_reference_functions(tmp_path):
    proc = _run_under_drop_in(OPS_ON_CHIP, tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert proc.stdout.count(" ok") == 10, proc.stdout


PIPELINES = _pallas_pipeline_kernels.pipeline_kernels(traxla, tnp, pl, pltpu)


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_compiled_pipeline_computes_the_reference(name):
    """pltpu.emit_pipeline kernels (tests/_pallas_pipeline_kernels.py), compiled, give
    NumPy's results on the chip (their DMA slices use the chip's tiling)."""
    fn, args = PIPELINES[name]
    got = traxla.tree_util.tree_leaves(traxla.jit(fn)(*args))
    want = traxla.tree_util.tree_leaves(_pallas_pipeline_kernels.reference(name, *args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-3)
