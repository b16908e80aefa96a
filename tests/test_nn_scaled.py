"""``traxla.nn.scaled_matmul``, ``scaled_dot_general`` and ``get_scaled_dot_general_config``
against JAX 0.10.2: jaxprs character for character, values bit for bit.

JAX 0.10.2 has no CPU lowering for the ``scaled_matmul`` primitive its
``scaled_matmul_wrapper`` lowers to (only CUDA's cuDNN custom call and ROCm's
``scaled_dot``), so JAX cannot run these functions here. To compare values, this file
registers, for JAX, the CPU lowering XLA's block-scaling rewriter would expand that custom
call into (dequantize each operand in the output type, then one batched dot_general) and
checks it against the plain NumPy formula of the docstring first. traxla lowers
``scaled_matmul_wrapper`` that way on every platform."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax as jlax
from jax._src.cudnn import scaled_matmul_stablehlo as jax_scaled
from jax._src.interpreters import mlir as jax_mlir

import traxla
from traxla.nn import _scaled_matmul as ours_scaled

F8, F8_E5M2, E8M0 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e8m0fnu


def _jax_cpu_scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, *, preferred_element_type):
    def dequantize(x, scales):
        block = x.shape[-1] // scales.shape[-1]
        x, scales = x.astype(preferred_element_type), scales.astype(preferred_element_type)
        scales = jlax.broadcast_in_dim(scales, scales.shape + (block,), (0, 1, 2))
        return x * scales.reshape(x.shape)
    return [jlax.dot_general(dequantize(lhs, lhs_scales), dequantize(rhs, rhs_scales),
                             (((2,), (2,)), ((0,), (0,))))]


jax_mlir.register_lowering(jax_scaled._scaled_matmul_p,
                           jax_mlir.lower_fun(_jax_cpu_scaled_matmul, multiple_results=True),
                           platform="cpu")

RNG = np.random.default_rng(0)


def _operands(batch=1, m=2, n=3, k=64, blocks=2, dtype=F8):
    a = RNG.normal(size=(batch, m, k)).astype(dtype)
    b = RNG.normal(size=(batch, n, k)).astype(dtype)
    a_scales = (2.0 ** RNG.integers(-3, 3, size=(batch, m, blocks))).astype(E8M0)
    b_scales = (2.0 ** RNG.integers(-3, 3, size=(batch, n, blocks))).astype(E8M0)
    return a, b, a_scales, b_scales


def _formula(a, b, a_scales, b_scales):
    """The docstring's definition, in float64 NumPy."""
    a_scaled = a.astype(np.float64) * np.repeat(a_scales.astype(np.float64),
                                                a.shape[-1] // a_scales.shape[-1], axis=-1)
    b_scaled = b.astype(np.float64) * np.repeat(b_scales.astype(np.float64),
                                                b.shape[-1] // b_scales.shape[-1], axis=-1)
    return np.einsum("BMK,BNK->BMN", a_scaled, b_scaled)


def _same_jaxpr(ours, theirs, *args):
    assert str(traxla.make_jaxpr(ours)(*args)) == str(jax.make_jaxpr(theirs)(*args))


@pytest.mark.parametrize("dtype,preferred", [(F8, np.float32), (F8_E5M2, ml_dtypes.bfloat16)])
def test_scaled_matmul_jaxpr_and_values(dtype, preferred):
    args = _operands(batch=2, dtype=dtype)
    ours_fn = lambda *xs: traxla.nn.scaled_matmul(*xs, preferred_element_type=preferred)  # noqa: E731
    jax_fn = lambda *xs: jax.nn.scaled_matmul(*xs, preferred_element_type=preferred)  # noqa: E731
    _same_jaxpr(ours_fn, jax_fn, *args)
    out = ours_fn(*args)
    assert out.shape == (2, 2, 3) and out.dtype == np.dtype(preferred)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jax_fn(*args)))
    np.testing.assert_allclose(np.asarray(out, np.float64), _formula(*args),
                               rtol=1e-6 if preferred == np.float32 else 1e-2)


def test_jax_oracle_lowering_is_the_formula():
    args = _operands()
    np.testing.assert_allclose(np.asarray(jax.nn.scaled_matmul(*args), np.float64),
                               _formula(*args), rtol=1e-6)


def test_scaled_matmul_shape_errors_as_jax():
    a, b, a_scales, b_scales = _operands()
    with pytest.raises(ValueError, match="3-dimensional"):
        traxla.nn.scaled_matmul(a[0], b, a_scales, b_scales)
    with pytest.raises(ValueError, match="matching batch \\(B\\) and contract \\(K\\) dimensions, "
                                         "but got shapes \\(1, 2, 64\\) and \\(1, 3, 32\\)"):
        traxla.nn.scaled_matmul(a, b[..., :32], a_scales, b_scales)
    with pytest.raises(ValueError, match="scales to have matching"):
        traxla.nn.scaled_matmul(a, b, a_scales, b_scales[..., :1])
    with pytest.raises(ValueError, match="scales to match non-contract dimensions"):
        traxla.nn.scaled_matmul(a, b, a_scales[:, :1], b_scales)


def test_scaled_matmul_vmap_jaxpr_values_and_unbatched_operands():
    args = [np.stack([x, x[::-1] if x.ndim else x]) for x in _operands()]
    _same_jaxpr(traxla.vmap(traxla.nn.scaled_matmul), jax.vmap(jax.nn.scaled_matmul), *args)
    moved = [np.moveaxis(x, 0, 1) for x in args]
    _same_jaxpr(traxla.vmap(traxla.nn.scaled_matmul, in_axes=1, out_axes=1),
                jax.vmap(jax.nn.scaled_matmul, in_axes=1, out_axes=1), *moved)
    out = traxla.vmap(traxla.nn.scaled_matmul)(*args)
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(out[i]),
                                      np.asarray(traxla.nn.scaled_matmul(*[x[i] for x in args])))
    # JAX's rule asserts every operand is batched alike; traxla also takes these
    a, b, a_scales, b_scales = args
    mixed = traxla.vmap(traxla.nn.scaled_matmul, in_axes=(0, None, 0, None))(
        a, b[0], a_scales, b_scales[0])
    np.testing.assert_array_equal(np.asarray(mixed[1]), np.asarray(
        traxla.nn.scaled_matmul(a[1], b[0], a_scales[1], b_scales[0])))
    last = traxla.vmap(traxla.nn.scaled_matmul, in_axes=3, out_axes=3)(
        *[np.moveaxis(x, 0, 3) for x in args])
    np.testing.assert_array_equal(np.moveaxis(np.asarray(last), 3, 0), np.asarray(out))


def test_scaled_matmul_has_no_derivative_as_in_jax():
    a, b, a_scales, b_scales = _operands()
    f = lambda x: traxla.nn.scaled_matmul(x.astype(F8), b, a_scales, b_scales).sum()  # noqa: E731
    with pytest.raises(NotImplementedError,
                       match="Differentiation rule for 'scaled_matmul_wrapper' not implemented"):
        traxla.grad(f)(np.ones(a.shape, np.float32))


def test_scaled_matmul_jit_and_lowered_text():
    args = _operands()
    lowered = traxla.jit(traxla.nn.scaled_matmul).lower(*args).as_text()
    assert "f8E4M3FN" in lowered and "f8E8M0FNU" in lowered and "dot_general" in lowered
    np.testing.assert_array_equal(np.asarray(traxla.jit(traxla.nn.scaled_matmul)(*args)),
                                  np.asarray(traxla.nn.scaled_matmul(*args)))


# -- scaled_dot_general -----------------------------------------------------------------------

X2 = RNG.normal(size=(32, 64)).astype(np.float32)
Y2 = RNG.normal(size=(32, 64)).astype(np.float32)
X3 = RNG.normal(size=(2, 32, 64)).astype(np.float32)
Y3 = RNG.normal(size=(2, 32, 64)).astype(np.float32)
DN2 = (((1,), (1,)), ((), ()))
DN3 = (((2,), (2,)), ((0,), (0,)))


def _pair(mode):
    return ([traxla.nn.get_scaled_dot_general_config(mode)] * 3,
            [jax.nn.get_scaled_dot_general_config(mode)] * 3)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("preferred", [np.float32, ml_dtypes.bfloat16])
def test_scaled_dot_general_values_and_grads_bit_exact(mode, preferred):
    ours_cfg, jax_cfg = _pair(mode)
    # jitted whole: eager, every quantization step would compile on its own
    ours = traxla.jit(lambda x, y: traxla.nn.scaled_dot_general(
        x, y, DN2, preferred_element_type=preferred, configs=ours_cfg))(X2, Y2)
    theirs = jax.jit(lambda x, y: jax.nn.scaled_dot_general(
        x, y, DN2, preferred_element_type=preferred, configs=jax_cfg))(X2, Y2)
    assert ours.shape == (32, 32) and ours.dtype == np.dtype(preferred)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    # quantization error stays small relative to the exact product
    exact = X2.astype(np.float64) @ Y2.T.astype(np.float64)
    assert np.abs(np.asarray(ours, np.float64) - exact).max() < 0.1 * np.abs(exact).max() * (
        3 if mode == "nvfp4" else 1)
    if preferred != np.float32:
        return  # the gradients do not depend on the output type
    ours_grads = traxla.jit(traxla.grad(lambda x, y: traxla.nn.scaled_dot_general(
        x, y, DN3, configs=ours_cfg).sum(), (0, 1)))(X3, Y3)
    jax_grads = jax.jit(jax.grad(lambda x, y: jax.nn.scaled_dot_general(
        x, y, DN3, configs=jax_cfg).sum(), (0, 1)))(X3, Y3)
    for o, t in zip(ours_grads, jax_grads):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(t))


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general_jaxprs_match_jax(mode):
    ours_cfg, jax_cfg = _pair(mode)
    _same_jaxpr(lambda x, y: traxla.nn.scaled_dot_general(x, y, DN2, configs=ours_cfg),
                lambda x, y: jax.nn.scaled_dot_general(x, y, DN2, configs=jax_cfg), X2, Y2)
    _same_jaxpr(traxla.grad(lambda x, y: traxla.nn.scaled_dot_general(
                    x, y, DN3, configs=ours_cfg).sum(), (0, 1)),
                jax.grad(lambda x, y: jax.nn.scaled_dot_general(
                    x, y, DN3, configs=jax_cfg).sum(), (0, 1)), X3, Y3)


def test_quantize_matches_jax_bit_for_bit():
    x = RNG.normal(size=(1, 2, 64)).astype(np.float32) * 10
    for mode in ("mxfp8", "nvfp4"):
        ours_cfg, jax_cfg = _pair(mode)
        ours_q, ours_s = traxla.jit(lambda v: ours_scaled.quantize(v, ours_cfg[0]))(x)
        jax_q, jax_s = jax.jit(lambda v: jax_scaled.quantize(v, jax_cfg[0]))(x)
        assert ours_q.dtype == jax_q.dtype and ours_s.dtype == jax_s.dtype
        np.testing.assert_array_equal(np.asarray(ours_q).view(np.uint8),
                                      np.asarray(jax_q).view(np.uint8))
        np.testing.assert_array_equal(np.asarray(ours_s).view(np.uint8),
                                      np.asarray(jax_s).view(np.uint8))


def test_configs_and_fallbacks():
    mx = traxla.nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.data_type, mx.scale_type, mx.global_scale) == (
        "mxfp8", 32, np.dtype(F8), np.dtype(E8M0), None)
    nv = traxla.nn.get_scaled_dot_general_config("nvfp4", np.array([0.5], np.float32))
    assert (nv.mode, nv.block_size, nv.data_type) == ("nvfp4", 16, np.dtype(ml_dtypes.float4_e2m1fn))
    assert float(nv.global_scale[0]) == 0.5
    assert float(traxla.nn.get_scaled_dot_general_config("nvfp4").global_scale[0]) == 1.0
    with pytest.raises(ValueError, match="Unsupported mode: int8"):
        traxla.nn.get_scaled_dot_general_config("int8")
    # configs=None is lax.dot_general
    _same_jaxpr(lambda x, y: traxla.nn.scaled_dot_general(x, y, DN2),
                lambda x, y: jax.nn.scaled_dot_general(x, y, DN2), X2, Y2)
    with pytest.raises(TypeError, match="Only support preferred_element_type"):
        traxla.nn.scaled_dot_general(X2, Y2, DN2, preferred_element_type=np.int32,
                                     configs=[mx] * 3)
    with pytest.warns(DeprecationWarning, match="Backend selector"):
        traxla.nn.scaled_dot_general(X2, Y2, DN2, implementation="cudnn")
    with pytest.raises(ValueError, match="multiple of the block size 32"):
        traxla.nn.scaled_dot_general(X2[:, :48], Y2[:, :48], DN2, configs=[mx] * 3)
