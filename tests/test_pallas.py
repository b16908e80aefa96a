"""jax.experimental.pallas on CPU: interpret mode runs kernels over a grid of blocks (values
as JAX's interpret mode gives them); without it a call raises JAX's CPU ValueError."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from traxla.experimental import pallas as pl
from traxla.experimental.pallas import tpu as pltpu


def _matmul_kernel(x_ref, y_ref, z_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        z_ref[...] = tnp.zeros_like(z_ref)

    z_ref[...] += x_ref[...] @ y_ref[...]


def _matmul(x, y, bm=8, bk=8, bn=8):
    (m, k), n = x.shape, y.shape[1]
    return pl.pallas_call(
        _matmul_kernel, out_shape=traxla.ShapeDtypeStruct((m, n), x.dtype),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        grid=(m // bm, n // bn, k // bk),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel", "parallel",
                                                                  "arbitrary")),
        interpret=True)(x, y)


def test_blocked_matmul_eager_jit_vmap():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 24), np.float32)
    b = rng.standard_normal((24, 16), np.float32)
    np.testing.assert_allclose(_matmul(tnp.asarray(a), tnp.asarray(b)), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(traxla.jit(_matmul)(a, b), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(traxla.vmap(_matmul)(a[None], b[None])[0], a @ b, rtol=1e-5,
                               atol=1e-5)


def test_program_id_partial_blocks_and_iota():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2 + pl.program_id(0)

    out = pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((5, 3), tnp.float32),
                         grid=(3,), in_specs=[pl.BlockSpec((2, 3), lambda i: (i, 0))],
                         out_specs=pl.BlockSpec((2, 3), lambda i: (i, 0)),
                         interpret=True)(tnp.ones((5, 3)))
    np.testing.assert_array_equal(out, np.repeat([[2.], [2.], [3.], [3.], [4.]], 3, 1))

    def iota_kernel(o_ref):
        i = pl.program_id(0)
        o_ref[i] = i

    out = pl.pallas_call(iota_kernel, out_shape=traxla.ShapeDtypeStruct((8,), tnp.int32),
                         grid=(8,), interpret=True)()
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.arange(8))


def test_scalar_prefetch():
    def kernel(s_ref, x_ref, o_ref):
        o_ref[...] = x_ref[...] + s_ref[0]

    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1, grid=(2,),
        in_specs=[pl.BlockSpec((2,), lambda i, s: (s[i],))],
        out_specs=pl.BlockSpec((2,), lambda i, s: (i,)))
    out = pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((4,), tnp.float32),
                         grid_spec=spec, interpret=True)(tnp.array([1, 0], tnp.int32),
                                                         tnp.arange(4.))
    np.testing.assert_array_equal(out, [3., 4., 1., 2.])


def test_cpu_without_interpret_raises_jax_error():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]

    f = pl.pallas_call(kernel, out_shape=traxla.ShapeDtypeStruct((4,), tnp.float32))
    with pytest.raises(ValueError, match="Only interpret mode is supported on CPU backend."):
        f(tnp.ones(4))
    with pytest.raises(ValueError, match="Only interpret mode is supported on CPU backend."):
        traxla.jit(f)(tnp.ones(4))
    with pytest.raises(ValueError, match="must be `\\(\\)`"):
        pl.pallas_call(kernel, out_shape=None, grid=(2,), grid_spec=pl.GridSpec(grid=(2,)))


def test_specs_print_as_jax():
    assert repr(pl.BlockSpec((2, 2))) == ("BlockSpec(block_shape=(2, 2), index_map=None, "
                                          "memory_space=None, pipeline_mode=None)")
    assert repr(pl.GridSpec(grid=(2,))) == ("GridSpec(grid=(2,), grid_names=None, in_specs="
                                            "NoBlockSpec, out_specs=NoBlockSpec, scratch_shapes=())")
    assert str(pl.ANY) == "any" and repr(pltpu.VMEM) == "VMEM"
    assert not hasattr(pltpu, "TPUMemorySpace")  # as JAX 0.10 (the distributed page's cell)
