"""JAX's own Pallas kernels (jax.experimental.pallas.ops) under the drop-in, run in
interpret mode on the CPU, against JAX's interpret mode; and the interpret-mode pieces they
need (kernel refs indexed with pl.ds, DMAs and semaphores, grids of traced size)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla.experimental import pallas as pl
from traxla.experimental.pallas import tpu as pltpu

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Run by JAX (in this process) and by traxla (a drop-in subprocess): JAX's kernel files,
# tiny shapes, every pallas_call in TPU interpret mode.
KERNELS = '''
import importlib
import numpy as np
import jax
from jax.experimental.pallas import tpu as pltpu


def run_kernels():
    rng = np.random.RandomState(0)
    r = lambda *s: rng.randn(*s).astype(np.float32)  # noqa: E731
    out = {}
    with pltpu.force_tpu_interpret_mode():
        from jax.experimental.pallas.ops.tpu import example_kernel, matmul
        out["double"] = example_kernel.double(r(8, 128))
        out["matmul"] = matmul.matmul(r(8, 256), r(256, 128), block_shape=(8, 128),
                                      block_k=128)
        from jax.experimental.pallas.ops.tpu import flash_attention as fa
        q, k, v = r(1, 1, 128, 64), r(1, 1, 128, 64), r(1, 1, 128, 64)
        bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                           block_q_major_dkv=128, block_k_major_dkv=128, block_k_dkv=128,
                           block_q_dkv=128, block_k_major_dq=128, block_k_dq=128,
                           block_q_dq=128)
        f = lambda q, k, v: fa.flash_attention(q, k, v, causal=True, sm_scale=0.5,  # noqa
                                               block_sizes=bs)
        out["flash"] = f(q, k, v)
        out["flash_grad"] = jax.grad(lambda q, k, v: (f(q, k, v) ** 2).sum(),
                                     argnums=(0, 1, 2))(q, k, v)
        gmm = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")
        out["gmm"] = gmm.gmm(r(128, 128), r(2, 128, 128), np.array([50, 78], np.int32),
                             tiling=(128, 128, 128))
        from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention
        pages = rng.permutation(16)[:8].reshape(2, 4).astype(np.int32)
        out["paged"] = paged_attention(r(2, 2, 128), r(1, 16, 16, 128), r(1, 16, 16, 128),
                                       np.array([20, 50], np.int32), pages,
                                       pages_per_compute_block=4)
        from jax.experimental.pallas.ops.tpu.splash_attention import (
            splash_attention_kernel as sk, splash_attention_mask as sm)
        bs = sk.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128)
        splash = sk.make_splash_mha(sm.MultiHeadMask([sm.CausalMask((128, 128))]),
                                    head_shards=1, q_seq_shards=1, block_sizes=bs)
        out["splash"] = splash(r(1, 128, 64), r(1, 128, 64), r(1, 128, 64))
    return {k: [np.asarray(x) for x in (v if isinstance(v, tuple) else (v,))]
            for k, v in out.items()}
'''


def _summary(x):
    """A few numbers that tell an array apart: its shape, sum, sum of squares and eight
    fixed random projections (JAX's side is stored as these, not as whole arrays)."""
    x = np.asarray(x, np.float64).ravel()
    w = np.random.RandomState(1).randn(8, x.size)
    return np.concatenate([[x.size, x.sum(), (x * x).sum()], w @ x])


def _jax_kernels():
    namespace = {}
    exec(compile(KERNELS, "<kernels>", "exec"), namespace)
    return {k: [_summary(x) for x in v] for k, v in namespace["run_kernels"]().items()}


def test_jax_kernels_run_under_the_drop_in_as_jax_interprets_them(tmp_path, jax_side):
    script = tmp_path / "kernels.py"
    script.write_text(KERNELS + "\nnp.savez(%r, **{f'{k}_{i}': x for k, v in "
                      "run_kernels().items() for i, x in enumerate(v)})\n"
                      % str(tmp_path / "out.npz"))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-m", "traxla.as_jax", str(script)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ours = np.load(tmp_path / "out.npz")
    theirs = jax_side(_jax_kernels)
    for name, values in theirs.items():
        for i, want in enumerate(values):
            got = _summary(ours[f"{name}_{i}"])
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3 * (1 + abs(want[1])),
                                       err_msg=name)


def test_ops_outside_the_drop_in_is_an_import_error():
    with pytest.raises(ImportError, match="drop-in"):
        import traxla.experimental.pallas.ops  # noqa: F401
    assert "traxla.experimental.pallas.ops" not in sys.modules


def _dma_kernel(starts_ref, x_hbm_ref, o_ref, buf_ref, sem, acc_ref):
    # a DMA of a pl.ds window of an HBM (pl.ANY) input, at a scalar-prefetch offset
    i = pl.program_id(0)
    copy = pltpu.make_async_copy(x_hbm_ref.at[pl.ds(starts_ref[i], 8)], buf_ref, sem)
    copy.start()
    copy.wait()

    @pl.when(i == 0)
    def _():
        acc_ref[...] = tnp.zeros_like(acc_ref[...])

    def body(j, carry):  # rows of the window, read with a traced pl.ds start
        acc_ref[pl.ds(j, 1), :] += buf_ref[pl.ds(j, 1), :] * 2.0
        return carry

    traxla.lax.fori_loop(0, 8, body, 0)
    o_ref[...] = acc_ref[...] + pltpu.roll(buf_ref[...], 1, 1)


def test_kernel_refs_dma_semaphores_and_dynamic_slices():
    x = np.arange(32 * 128, dtype=np.float32).reshape(32, 128)
    starts = np.array([3, 17, 9], np.int32)
    call = pl.pallas_call(
        _dma_kernel, out_shape=traxla.ShapeDtypeStruct((3, 8, 128), np.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(3,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec((None, 8, 128), lambda i, s: (i, 0, 0)),
            scratch_shapes=[pltpu.VMEM((8, 128), np.float32), pltpu.SemaphoreType.DMA,
                            pltpu.VMEM((8, 128), np.float32)]),
        interpret=True)
    got = np.asarray(traxla.jit(call)(starts, x))
    acc, want = np.zeros((8, 128), np.float32), []
    for s in starts:
        window = x[s:s + 8]
        acc = acc + 2 * window
        want.append(acc + np.roll(window, 1, 1))
    np.testing.assert_array_equal(got, np.stack(want))


def test_grid_of_traced_size_runs_its_points():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + pl.program_id(0).astype(np.float32)

    @traxla.jit
    def f(x, n):
        return pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((32, 128), np.float32),
                              grid=(n,), in_specs=[pl.BlockSpec((8, 128), lambda i: (i, 0))],
                              out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)),
                              interpret=True)(x)

    out = np.asarray(f(np.zeros((32, 128), np.float32), np.int32(3)))
    np.testing.assert_array_equal(out[:24], np.repeat(np.arange(3.0), 8)[:, None]
                                  * np.ones((1, 128)))
    assert np.isnan(out[24:]).all()  # never written: JAX's uninitialized NaNs


def test_gpu_pallas_names_exist_and_raise_not_implemented():
    from traxla.experimental.pallas import fuser, mosaic_gpu, tpu_sc, triton
    assert len(triton.__all__) == 16 and len(mosaic_gpu.__all__) == 92
    assert len(fuser.__all__) == 12 and len(tpu_sc.__all__) == 24
    with pytest.raises(NotImplementedError, match="Triton"):
        triton.load(None)
    with pytest.raises(NotImplementedError, match="Mosaic GPU"):
        mosaic_gpu.Barrier(1)
    with pytest.raises(NotImplementedError, match="remote"):
        pltpu.make_async_remote_copy(None, None, None, None, 0)
    assert pl.cdiv(7, 2) == 4 and pl.next_power_of_2(5) == 8
    assert pl.ds(4) == pl.Slice(0, 4, 1)


def test_estimate_cost_counts_as_jax():
    est = pl.estimate_cost(lambda a, b: tnp.exp(a @ b), traxla.ShapeDtypeStruct((4, 8), np.float32),
                           traxla.ShapeDtypeStruct((8, 16), np.float32))
    assert est == pl.CostEstimate(flops=2 * 4 * 8 * 16, transcendentals=4 * 16,
                                  bytes_accessed=4 * (32 + 128 + 64))


_PALLAS_MODULES = ("", ".tpu", ".triton", ".mosaic_gpu", ".fuser", ".tpu_sc")


def _kinds(module):
    import inspect
    import types
    out = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue  # submodules are attributes only once imported
        out[name] = ("class" if inspect.isclass(value) else
                     "function" if callable(value) else "constant")
    return out


def _jax_pallas_names():
    import importlib
    return {m: _kinds(importlib.import_module("jax.experimental.pallas" + m))
            for m in _PALLAS_MODULES}


def test_pallas_modules_have_jax_public_names_of_the_same_kind(jax_side):
    import importlib
    theirs = jax_side(_jax_pallas_names)
    for m in _PALLAS_MODULES:
        ours = _kinds(importlib.import_module("traxla.experimental.pallas" + m))
        assert ours == theirs[m], m


def test_kernel_ref_reshape_and_bitcast_views():
    def kernel(x_ref, o_ref, bits_ref):
        o_ref.reshape(4, 256)[1:3, :] = x_ref.reshape(-1, 256)[1:3, :] * 2.0
        o_ref.reshape(4, 256)[0, :] = tnp.zeros((256,), np.float32)
        bits_ref[...] = pltpu.bitcast(x_ref, np.int32)[...]

    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128) / 7
    out, bits = pl.pallas_call(
        kernel, out_shape=(traxla.ShapeDtypeStruct((8, 128), np.float32),
                           traxla.ShapeDtypeStruct((8, 128), np.int32)),
        interpret=True)(x)
    want = np.full((4, 256), np.nan, np.float32)
    want[1:3], want[0] = x.reshape(4, 256)[1:3] * 2, 0
    np.testing.assert_array_equal(np.asarray(out), want.reshape(8, 128))
    np.testing.assert_array_equal(np.asarray(bits), x.view(np.int32))


def test_forced_interpret_mode_params_and_blocked_dims():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 3.0

    call = pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((16, 128), np.float32),
                          grid=(1,), in_specs=[pl.BlockSpec((pl.Blocked(8), 128),
                                                            lambda i: (i, 0))],
                          out_specs=pl.BlockSpec((8, 128), lambda i: (i, 0)))
    x = np.ones((16, 128), np.float32)
    with pytest.raises(ValueError, match="Only interpret mode"):
        call(x)
    with pltpu.force_tpu_interpret_mode(pltpu.InterpretParams(uninitialized_memory="zero")):
        out = np.asarray(call(x))
    np.testing.assert_array_equal(out, np.concatenate([np.full((8, 128), 3.0),
                                                       np.zeros((8, 128))]))
