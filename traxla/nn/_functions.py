"""The rest of ``jax.nn``'s functions: identity, sparse_plus/sparse_sigmoid, glu, logmeanexp,
log1mexp and dot_product_attention (the XLA implementation, with bias, boolean mask, causal
and local-window masks, sequence lengths and grouped query heads), written as JAX writes them
so that jaxprs print the same."""
from __future__ import annotations

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api import jit
from traxla.autodiff import custom_jvp
from traxla.batching.batch_trace import vmap
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import ensure_arraylike
from traxla.numpy._reductions import logsumexp
from traxla.nn import sigmoid, softmax

__all__ = ["identity", "sparse_plus", "sparse_sigmoid", "glu", "logmeanexp", "log1mexp",
           "dot_product_attention"]


@jit
def identity(x):
    """Returns ``x`` (as an array)."""
    return ensure_arraylike("identity", x)


@jit
def sparse_plus(x):
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 between (the sparsemax-style softplus)."""
    x = ensure_arraylike("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``: the derivative of sparse_plus."""
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


def _glu(x, axis=-1):
    x_arr = ensure_arraylike("glu", x)
    size = x_arr.shape[axis]
    assert size % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = jnp.split(x_arr, 2, axis)
    return x1 * sigmoid(x2)


glu = jit_named(_glu, "glu", ("axis",))


def _count(a, axis, keepdims, where, dtype):
    if where is None:
        shape = np.shape(a) if not hasattr(a, "aval") else tuple(a.shape)
        if axis is None:
            count = int(np.prod(shape))
        else:
            axes = (axis,) if isinstance(axis, int) else tuple(axis)
            count = int(np.prod([shape[i] for i in axes]))
        return lax.convert_element_type(count, dtype)
    return jnp.sum(jnp.broadcast_to(where, np.shape(a)), axis, dtype=dtype, keepdims=keepdims)


def _logmeanexp(x, axis=None, where=None, keepdims=False):
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    count = _count(x, axis=axis, where=where, keepdims=keepdims, dtype=lse.dtype)
    return lse - jnp.log(count)


logmeanexp = jit_named(_logmeanexp, "logmeanexp", ("axis", "keepdims"))


@custom_jvp
@jit
def log1mexp(x):
    """``log(1 - exp(-x))``, accurately on both sides of log(2)."""
    x = ensure_arraylike("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


# -- dot_product_attention -------------------------------------------------------------------------

def _get_large_negative(dtype):
    dtype_max = min(dtypes.finfo(dtype).max, dtypes.finfo(np.float32).max)
    return jnp.asarray(-0.7 * dtype_max, dtype=dtype)


def _get_causal_mask(T, S):  # noqa: N803 - JAX's names
    return jnp.tril(jnp.ones((T, S), dtype=bool))[None, None, :, :]


def _get_window_mask(T, S, local_window_size):  # noqa: N803
    query_pos = jnp.array(range(T))
    key_pos = jnp.array(range(S))
    left_window, right_window = local_window_size
    left_mask = query_pos[..., None] <= key_pos[..., None, :] + left_window
    right_mask = query_pos[..., None] >= key_pos[..., None, :] - right_window
    return jnp.logical_and(right_mask, left_mask)[None, None, :, :]


def _get_padding_mask_logits(T, S, q_seqlen, kv_seqlen):  # noqa: N803
    q_mask = True
    kv_mask = True
    if q_seqlen is not None:
        q_mask = jnp.arange(0, T)[None, :, None] < q_seqlen[:, None, None]
    if kv_seqlen is not None:
        kv_mask = jnp.arange(0, S)[None, None, :] < kv_seqlen[:, None, None]
    return jnp.logical_and(q_mask, kv_mask)[:, None, :, :]


def _get_padding_mask_encoded(T, q_seqlen):  # noqa: N803
    mask = jnp.arange(0, T)[None, :] < q_seqlen[:, None]
    return mask[:, :, None, None]


def _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
    if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
            and local_window_size is None):
        return logits
    combined_mask = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined_mask = jnp.logical_and(combined_mask, mask)
    T, S = logits.shape[2], logits.shape[3]  # noqa: N806
    if is_causal:
        combined_mask = jnp.logical_and(combined_mask, _get_causal_mask(T, S))
    if local_window_size is not None:
        combined_mask = jnp.logical_and(combined_mask, _get_window_mask(T, S, local_window_size))
    if q_seqlen is not None or kv_seqlen is not None:
        combined_mask = jnp.logical_and(combined_mask,
                                        _get_padding_mask_logits(T, S, q_seqlen, kv_seqlen))
    return jnp.where(combined_mask, logits, _get_large_negative(logits.dtype))


def _attention_core(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                    local_window_size, return_residual):
    logits_dtype = np.promote_types(query.dtype, np.float32)  # float32, or float64 for f64
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, preferred_element_type=logits_dtype)
    logits *= jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    padded_logits = _apply_masks(logits, mask, is_causal, q_seqlen, kv_seqlen, local_window_size)
    padded_logits = padded_logits.astype(np.float32)
    probs = softmax(padded_logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_seqlen is not None:
        mask = _get_padding_mask_encoded(encoded.shape[1], q_seqlen)
        encoded *= mask.astype(encoded.dtype)
    if return_residual:
        lse_residual = logsumexp(padded_logits, axis=-1).astype(key.dtype)
        lse_residual = jnp.transpose(lse_residual, (0, 2, 1))  # B N T -> B T N
        return encoded, lax.stop_gradient(lse_residual)
    return encoded


def _attention_xla(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
                   local_window_size, return_residual=False):
    B, T, N, H = query.shape  # noqa: N806
    _, S, K, _ = key.shape  # noqa: N806
    G = N // K  # noqa: N806 - query heads per key/value head
    query = jnp.reshape(query, (B, T, K, G, H))

    def reshape_to_grouped(t):
        if t is not None:
            tB, tN, tT, tS = t.shape  # noqa: N806
            if tN == 1:
                t = jnp.broadcast_to(t[:, :, None, :, :], (tB, tN, G, tT, tS))
            else:
                t = jnp.reshape(t, (tB, K, G, tT, tS))
        return t

    bias = reshape_to_grouped(bias)
    mask = reshape_to_grouped(mask)
    output = vmap(_attention_core, in_axes=(3, None, None, 2, 2, None, None, None, None, None,
                                            None), out_axes=3)(
        query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen, local_window_size,
        return_residual)
    if return_residual:
        encoded, lse_residual = output
        return jnp.reshape(encoded, (B, T, N, H)), jnp.reshape(lse_residual, (B, T, N))
    return jnp.reshape(output, (B, T, N, H))


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None, return_residual=False):
    """Scaled dot-product attention ``softmax(Q K^T * scale + bias) V`` over ``[B, T, N, H]``
    queries and ``[B, S, K, H]`` keys/values (N a multiple of K: grouped-query attention)."""
    output_shape = jnp.asarray(query).shape
    residual_shape = output_shape[:-1]

    def ensure_4d(t):
        t = jnp.asarray(t)
        dims_to_add = 4 - t.ndim
        return jnp.expand_dims(t, axis=tuple(range(dims_to_add))) if dims_to_add > 0 else t

    query_arr, key_arr, value_arr = ensure_4d(query), ensure_4d(key), ensure_4d(value)
    bias = ensure_4d(bias) if bias is not None else None
    mask = ensure_4d(mask) if mask is not None else None
    if query_seq_lengths is not None:
        query_seq_lengths = jnp.asarray(query_seq_lengths)
    if key_value_seq_lengths is not None:
        key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)

    def check(t, shape, dtype, name):
        if t is None:
            return
        if t.ndim != len(shape):
            raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
        if dtype is not None and t.dtype != dtype:
            raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
        for i in range(t.ndim):
            if shape[i] != -1 and t.shape[i] != shape[i]:
                raise ValueError(f"{name} shape should be {shape}: but got {t.shape}")

    B, S, K, H = key_arr.shape  # noqa: N806
    check(value_arr, [B, S, K, H], key_arr.dtype, "value")
    check(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    check(mask, [-1] * 4, np.dtype(bool), "mask")
    check(bias, [-1] * 4, None, "bias")
    check(query_seq_lengths, [B], np.dtype("int32"), "query_seq_lengths")
    check(key_value_seq_lengths, [B], np.dtype("int32"), "key_value_seq_lengths")
    if query_arr.shape[-2] % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but "
                         f"got {query_arr.shape[-2]} vs {K}")
    scale_val = (1.0 / np.sqrt(H)) if scale is None else scale
    if implementation == "cudnn":
        raise NotImplementedError("dot_product_attention(implementation='cudnn') needs cuDNN's "
                                  "fused attention kernel, which traxla does not bind; use "
                                  "implementation='xla' or None.")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out = _attention_xla(query_arr, key_arr, value_arr, bias, mask, is_causal=is_causal,
                         scale=scale_val, q_seqlen=query_seq_lengths,
                         kv_seqlen=key_value_seq_lengths, local_window_size=local_window_size,
                         return_residual=return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, residual_shape)
    return jnp.reshape(out, output_shape)
