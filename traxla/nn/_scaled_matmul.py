"""Block-scaled matmul for ``traxla.nn``: ``scaled_matmul`` (quantized operands with per-block
scales, one ``scaled_matmul_wrapper`` inside ``jit[name=_scaled_matmul]``) and
``scaled_dot_general`` (quantizes high-precision operands by an mxfp8 or nvfp4
``BlockScaleConfig``, then calls it; a custom VJP quantizes the gradients too), written as
JAX 0.10.2 writes them (``jax/_src/cudnn/scaled_matmul_stablehlo.py``) so jaxprs match."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

import warnings

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_vjp
from traxla.ir import dtypes
from traxla.ir.rules.scaled_matmul import scaled_matmul_wrapper_p

float8_e4m3fn = np.dtype("float8_e4m3fn")
float8_e8m0fnu = np.dtype("float8_e8m0fnu")
float4_e2m1fn = np.dtype("float4_e2m1fn")


@dataclass(slots=True)
class BlockScaleConfig:
    """How ``scaled_dot_general`` quantizes one operand: ``mode`` ('mxfp8' or 'nvfp4'),
    ``block_size`` elements per scale along the contracting axis, the quantized
    ``data_type`` and ``scale_type``, and nvfp4's ``global_scale``."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


@partial(jit, static_argnames=("preferred_element_type",))
def _scaled_matmul(lhs, rhs, lhs_scales, rhs_scales,
                   preferred_element_type=np.dtype("float32")):
    output = scaled_matmul_wrapper_p.bind(lhs, rhs, lhs_scales, rhs_scales,
                                          preferred_element_type=preferred_element_type)
    return output[0]


def scaled_matmul_wrapper(lhs, rhs, lhs_scales, rhs_scales,
                          preferred_element_type=np.dtype("float32")):
    """``(B, M, K) x (B, N, K) -> (B, M, N)`` with per-block scales ``(B, M, K_block)`` and
    ``(B, N, K_block)``."""
    _, _, lhs_k = lhs.shape
    _, _, rhs_k = rhs.shape
    if lhs_k != rhs_k:
        raise ValueError(f"scaled_matmul_wrapper: lhs and rhs contracting sizes differ: "
                         f"{lhs_k} and {rhs_k}")
    preferred_element_type = dtypes.check_user_dtype(preferred_element_type,
                                                     "scaled_matmul_wrapper")
    return _scaled_matmul(lhs, rhs, lhs_scales, rhs_scales,
                          preferred_element_type=preferred_element_type)


def shape_normalization(x, dimension_numbers):
    """``x`` transposed and reshaped to ``(batch, rows, contracting)`` given
    ``(contracting_dims, batch_dims)``."""
    orig_order = list(range(x.ndim))
    contracting_dims, batch_dims = dimension_numbers
    contracting_order = [d for d in orig_order if d in contracting_dims]
    batch_order = [d for d in orig_order if d in batch_dims]
    non_contracting_order = [d for d in orig_order
                             if d not in contracting_dims and d not in batch_dims]
    batch_shape = [x.shape[d] for d in batch_order]
    rows_shape = [x.shape[d] for d in non_contracting_order]
    cols_shape = [x.shape[d] for d in contracting_order]
    new_order = batch_order + non_contracting_order + contracting_order
    rows, cols, batches = (np.prod(rows_shape), np.prod(cols_shape),
                           np.prod(batch_shape, dtype=int))
    t = jnp.transpose(x, new_order)
    return jnp.reshape(t, (batches, rows, cols))


def compute_dot_output_shape(lhs_shape, rhs_shape, lhs_dimension_numbers,
                             rhs_dimension_numbers):
    """A ``dot_general``'s output shape: batch, lhs free, then rhs free dimensions."""
    lhs_contract, lhs_batch = lhs_dimension_numbers
    rhs_contract, rhs_batch = rhs_dimension_numbers
    output_shape = [dim for i, dim in enumerate(lhs_shape) if i in lhs_batch]
    output_shape += [dim for i, dim in enumerate(lhs_shape)
                     if i not in lhs_contract and i not in lhs_batch]
    output_shape += [dim for i, dim in enumerate(rhs_shape)
                     if i not in rhs_contract and i not in rhs_batch]
    return tuple(output_shape)


def cast_to_e8m0_with_rounding_up(x):
    """The biased exponent byte of ``x`` rounded up to a power of two (e8m0's encoding)."""
    temp = x.astype(np.float32).view(np.uint32)
    exp = temp >> 23
    mant = temp & 0x7FFFFF
    is_ru = jnp.logical_and(
        jnp.logical_and((mant > 0), (exp != 0xFE)),
        ~jnp.logical_and((exp == 0), (mant <= 0x400000)))
    exp = jnp.where(is_ru, exp + 1, exp)
    return exp.astype(np.uint8)


def e8m0_to_dtype(x, dtype):
    """An e8m0 exponent byte as the power of two it encodes, in ``dtype`` (a zero byte
    becomes the smallest normal value of the target instead of 0)."""
    temp = x.astype(np.uint32)
    exp = temp << 23
    new_x = exp.view(np.float32)
    near_zero_value = 2**-15 if dtype == np.float16 else 2**-127
    new_x = jnp.where(new_x == 0, jnp.array(near_zero_value, np.float32), new_x)
    return new_x.astype(dtype)


def quantize(x, config):
    """``(x_q, scales_q)``: ``x`` (``(B, M, K)``) in ``config.data_type`` and one scale in
    ``config.scale_type`` per block of ``config.block_size`` along K."""
    x_shape = x.shape
    contract_dim = x_shape[-1]
    block_size = config.block_size
    if not (contract_dim >= block_size and contract_dim % block_size == 0):
        raise ValueError(f"quantize: the contracting size {contract_dim} must be a positive "
                         f"multiple of the block size {block_size}")
    x_new_shape = x_shape[:-1] + (x_shape[-1] // block_size, block_size)
    x = x.reshape(x_new_shape)  # (B, M, K / block_size, block_size)
    MAX = dtypes.finfo(np.dtype(config.data_type)).max.astype(x.dtype)

    def get_scales_per_block(values):
        return jnp.max(jnp.abs(values), axis=-1, keepdims=True) / MAX

    if config.mode == "mxfp8":
        if config.global_scale is not None:
            raise ValueError("quantize: mxfp8 takes no global_scale")
        if np.dtype(config.scale_type) != float8_e8m0fnu:
            raise ValueError("quantize: mxfp8 scales are float8_e8m0fnu")
        scales_q = cast_to_e8m0_with_rounding_up(get_scales_per_block(x))
        scaled_x = x / e8m0_to_dtype(scales_q, x.dtype)
    elif config.mode == "nvfp4":
        if np.dtype(config.scale_type) != float8_e4m3fn:
            raise ValueError("quantize: nvfp4 scales are float8_e4m3fn")
        if config.global_scale.dtype != np.float32:
            raise ValueError("quantize: nvfp4's global_scale must be float32")
        SCALE_MAX = dtypes.finfo(np.dtype(config.scale_type)).max.astype(x.dtype)
        x /= config.global_scale
        scales_q = jnp.clip(get_scales_per_block(x), 0, SCALE_MAX)
        scales_q = lax.optimization_barrier(scales_q.astype(config.scale_type))
        scaled_x = x / scales_q.astype(np.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")

    clipped_x = jnp.clip(scaled_x, -MAX, MAX)
    x_q = clipped_x.astype(config.data_type)
    x_q = x_q.reshape(x_shape)  # (B, M, K)
    scales_q = jnp.reshape(scales_q, scales_q.shape[:-1]).view(config.scale_type)
    return x_q, scales_q


def scaled_dot_impl(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    if preferred_element_type is None:
        preferred_element_type = jnp.result_type(lhs, rhs)
    else:
        preferred_element_type = dtypes.check_user_dtype(preferred_element_type,
                                                         "scaled_dot_impl")
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_dn = (lhs_contract, lhs_batch)
    rhs_dn = (rhs_contract, rhs_batch)

    lhs_3d = shape_normalization(lhs, lhs_dn)
    rhs_3d = shape_normalization(rhs, rhs_dn)
    lhs_config, rhs_config = configs[0], configs[1]
    lhs_q, lhs_scales = quantize(lhs_3d, lhs_config)
    rhs_q, rhs_scales = quantize(rhs_3d, rhs_config)

    out_dtype = preferred_element_type
    if configs[0].mode == "nvfp4":
        out_dtype = np.float32

    out = scaled_matmul_wrapper(lhs_q, rhs_q, lhs_scales, rhs_scales,
                                preferred_element_type=out_dtype)

    if configs[0].mode == "nvfp4":
        out *= (configs[0].global_scale * configs[1].global_scale)
        out = out.astype(preferred_element_type)

    expanded_out_shape = compute_dot_output_shape(lhs.shape, rhs.shape, lhs_dn, rhs_dn)
    return jnp.reshape(out, expanded_out_shape)


def _remaining(original, *removed_lists):
    removed = set(d for dims in removed_lists for d in dims)
    return [i for i in original if i not in removed]


def _ranges_like(*xs):
    start = 0
    for x in xs:
        x_len = len(x)
        yield range(start, start + x_len)
        start += x_len


def scaled_dot_general_transpose_lhs(g, x, y, *, dimension_numbers, preferred_element_type,
                                     configs, swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = x.ndim
    x_kept = _remaining(range(x_ndim), x_contract, x_batch)
    y_kept = _remaining(range(np.ndim(y)), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)

    x_contract_sorted_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)

    y_dn = (y_kept, y_batch)
    g_dn = (ans_y, ans_batch)

    y_3d = shape_normalization(y, y_dn)
    g_3d = shape_normalization(g, g_dn)

    g_config, y_config = configs[0], configs[1]
    if configs[0].mode != "nvfp4":
        g_q, g_scales = quantize(g_3d, g_config)
        y_q, y_scales = quantize(y_3d, y_config)
        out = scaled_matmul_wrapper(g_q, y_q, g_scales, y_scales, preferred_element_type)
    else:
        out = jnp.matmul(g_3d, jnp.permute_dims(y_3d, (0, 2, 1)),
                         preferred_element_type=preferred_element_type)

    expanded_out_shape = compute_dot_output_shape(g.shape, y.shape, g_dn, y_dn)
    expanded_out = jnp.reshape(out, expanded_out_shape)
    return lax.transpose(expanded_out, tuple(out_axes))


def scaled_dot_general_transpose_rhs(g, x, y, *, dimension_numbers, preferred_element_type,
                                     configs):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped_dimension_numbers = ((y_contract, x_contract), (y_batch, x_batch))
    return scaled_dot_general_transpose_lhs(
        g, y, x, dimension_numbers=swapped_dimension_numbers,
        preferred_element_type=preferred_element_type, configs=configs, swap_ans=True)


@partial(custom_vjp, nondiff_argnums=(2, 3, 4))
def scaled_dot_general_fn(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return scaled_dot_impl(lhs, rhs, dimension_numbers, preferred_element_type, configs)


def scaled_dot_fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    out = scaled_dot_impl(lhs, rhs, dimension_numbers, preferred_element_type, configs)
    return out, (lhs, rhs)


def scaled_dot_bwd(dimension_numbers, preferred_element_type, configs, res, g):
    (lhs, rhs) = res
    args = [g, lhs, rhs]
    kw_args = {"dimension_numbers": dimension_numbers,
               "preferred_element_type": preferred_element_type}
    grad_lhs = scaled_dot_general_transpose_lhs(*args, **kw_args,
                                                configs=[configs[2], configs[1]])
    grad_rhs = scaled_dot_general_transpose_rhs(*args, **kw_args,
                                                configs=[configs[2], configs[0]])

    # A straight-through estimator that zeroes the gradient of inputs nvfp4 clipped
    if configs[2].mode == "nvfp4":
        if rhs.dtype != lhs.dtype:
            raise TypeError("scaled_dot_general: nvfp4 gradients need lhs and rhs of one dtype")
        MAX = dtypes.finfo(np.dtype(configs[0].data_type)).max.astype(lhs.dtype)
        SCALE_MAX = dtypes.finfo(np.dtype(configs[0].scale_type)).max.astype(lhs.dtype)
        grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * MAX * SCALE_MAX,
                             grad_lhs, 0)
        grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * MAX * SCALE_MAX,
                             grad_rhs, 0)
    return (grad_lhs, grad_rhs)


scaled_dot_general_fn.defvjp(scaled_dot_fwd, scaled_dot_bwd)


def ensure_tuple(dimension_numbers):
    _to_tuple = lambda x: x if isinstance(x, tuple) else tuple(x)  # noqa: E731
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    return ((_to_tuple(lhs_contract), _to_tuple(rhs_contract)),
            (_to_tuple(lhs_batch), _to_tuple(rhs_batch)))


def _ensure_batch_dim(lhs, rhs, dimension_numbers):
    contracting_dims, (lhs_batch, rhs_batch) = dimension_numbers
    lhs_batched, rhs_batched = lhs, rhs
    if lhs_batch == ():  # a trailing unit batch axis
        lhs_batched = jnp.expand_dims(lhs, axis=lhs.ndim)
        lhs_batch = (lhs.ndim,)
    if rhs_batch == ():
        rhs_batched = jnp.expand_dims(rhs, axis=rhs.ndim)
        rhs_batch = (rhs.ndim,)
    return lhs_batched, rhs_batched, (contracting_dims, (lhs_batch, rhs_batch))


def _mxfp8_config():
    return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=float8_e4m3fn,
                            scale_type=float8_e8m0fnu, global_scale=None, infer_only=False)


def scaled_dot_general_wrapper(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                               configs=None):
    if preferred_element_type not in (np.dtype("float32"), np.dtype("bfloat16"),
                                      np.dtype("float16")):
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{preferred_element_type}")
    if configs is None:
        configs = [_mxfp8_config()] * 3
    dimension_numbers = ensure_tuple(dimension_numbers)
    lhs_batched, rhs_batched, dn_batched = _ensure_batch_dim(lhs, rhs, dimension_numbers)
    out = scaled_dot_general_fn(lhs_batched, rhs_batched, dn_batched, preferred_element_type,
                                configs)
    # the unit batch axis added above leads the output: drop it
    if dn_batched != dimension_numbers:
        return jnp.squeeze(out, axis=0)
    return out


# -- the jax.nn functions ----------------------------------------------------------------------

def _matching_batch_and_contract(what, lhs, rhs):
    """``(M, N)`` of ``lhs`` (B, M, K) and ``rhs`` (B, N, K), once they agree on B and K."""
    B_l, M, K_l = lhs.shape
    B_r, N, K_r = rhs.shape
    if K_l != K_r or B_l != B_r:
        raise ValueError(
            f"scaled_matmul requires {what} to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {lhs.shape} and {rhs.shape}")
    return M, N


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    r"""Scaled matrix multiplication function.

    Performs block-scaled matmul of `a` and `b` using `a_scales` and `b_scales`.
    The last dim is the contracting dim, and block size is inferred.

    Mathematically, this operation is equivalent to::

      a_block_size = a.shape[-1] // a_scales.shape[-1]
      b_block_size = b.shape[-1] // b_scales.shape[-1]
      a_scaled = a * jnp.repeat(a_scales, a_block_size, axis=-1)
      b_scaled = b * jnp.repeat(b_scales, b_block_size, axis=-1)
      jnp.einsum('BMK,BNK->BMN', a_scaled, b_scaled)

    Args:
      lhs (Array): Operand a, shape (B, M, K).
      rhs (Array): Operand b, shape (B, N, K).
      lhs_scales (Array): Shape (B, M, K_a), where `K % K_a == 0`.
      rhs_scales (Array): Shape (B, N, K_b), where `K % K_b == 0`.
      preferred_element_type (DTypeLike, optional): Defaults to `jnp.float32`.

    Returns:
      Array of shape (B, M, N).
    """
    a, b, a_scales, b_scales = lhs, rhs, lhs_scales, rhs_scales
    if not all(x.ndim == 3 for x in (a, b, a_scales, b_scales)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")

    M_a, N_b = _matching_batch_and_contract("inputs a and b", a, b)
    M_as, N_bs = _matching_batch_and_contract("scales", a_scales, b_scales)

    if M_as != M_a or N_bs != N_b:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of "
            f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
            f"{a_scales.shape}, b_scales: {b_scales.shape}")

    preferred_element_type = dtypes.check_user_dtype(preferred_element_type, "scaled_matmul")
    return scaled_matmul_wrapper(a, b, a_scales, b_scales,
                                 preferred_element_type=preferred_element_type)


def get_scaled_dot_general_config(mode, global_scale=None):
    r"""Get quantization configs for scaled_dot_general.

    Create quantization configs for the `jax.nn.scaled_dot_general`: 'mxfp8' (blocks of
    32, float8_e4m3fn data, float8_e8m0fnu scales) or 'nvfp4' (blocks of 16,
    float4_e2m1fn data, float8_e4m3fn scales, a float32 ``global_scale``, 1 by default).
    """
    if mode == "nvfp4":
        one = jnp.ones((1,), dtype=np.float32)
        return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=float4_e2m1fn,
                                scale_type=float8_e4m3fn,
                                global_scale=one if global_scale is None else global_scale,
                                infer_only=False)
    if mode == "mxfp8":
        return _mxfp8_config()
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
    r"""Scaled dot general operation.

    Performs a generalized dot product with block-scaled quantization on the
    lhs and rhs inputs. This operation extends `lax.dot_general` to support
    user-defined scaling configurations.

    Essentially, the operation follows::

        a, a_scales = quantize(lhs, configs[0])
        b, b_scales = quantize(rhs, configs[1])
        c = jax.nn.scaled_matmul(a, b, a_scales, b_scales)

    ``configs`` (lhs, rhs and gradient ``BlockScaleConfig``s from
    ``get_scaled_dot_general_config``); with ``configs=None`` this is
    ``lax.dot_general``. ``implementation`` is deprecated and ignored.
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the "
                      "backend automatically.", DeprecationWarning)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    return scaled_dot_general_wrapper(lhs, rhs, dimension_numbers,
                                      preferred_element_type=preferred_element_type,
                                      configs=configs)
