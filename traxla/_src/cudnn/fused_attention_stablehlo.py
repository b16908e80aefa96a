"""``jax._src.cudnn.fused_attention_stablehlo``: the checks JAX makes before a cuDNN fused
attention (keras calls them to decide whether flash attention is available): layouts,
shapes and dtypes, the cuDNN version and the GPU's compute capability. Where there is no
CUDA backend (no cuDNN) they answer as JAX's do: ``check_cudnn_version`` raises
``RuntimeError("cuDNN is not detected.")`` and ``check_compute_capability`` is False."""
from __future__ import annotations

import enum

import ml_dtypes
import numpy as np

from traxla._src import xla_bridge
from traxla._src.lib import cuda_versions

__all__ = ["AttentionLayout", "MaskType", "check_compute_capability", "check_cudnn_version",
           "check_is_flash_attention", "check_layout", "is_cuda_compute_capability_equal"]


class AttentionLayout(enum.Enum):
    BTNH = 0
    BNTH = 1


class MaskType(enum.Enum):
    NO_MASK = 0
    PADDING = 1
    CAUSAL = 2
    PADDING_CAUSAL = 3
    ALIBI = 4


def _normalize_layout(layout: str) -> AttentionLayout:
    upper = layout.upper()
    if upper in ("BSNH", "BNSH", "BTNH", "BNTH"):
        return AttentionLayout[upper.replace("S", "T")]
    raise ValueError(f"Unsupported qkv_layout: {layout}")


def check_layout(query, key, value, bias, q_seqlen, kv_seqlen, q_offsets, kv_offsets,
                 page_table_k, page_table_v, layout):
    """Raises for operands cuDNN attention does not take (ranks, dtypes, matching batch,
    heads and sequence lengths, bias, sequence lengths and offsets)."""
    def check_eq(a, b, c, msg):
        if not (a == b == c):
            raise ValueError(f"{msg} must be same, got {a}, {b}, {b}")

    q_rank, k_rank, v_rank = len(query.shape), len(key.shape), len(value.shape)
    if q_rank != 4:
        raise ValueError(f"Q must have a rank of 4, got {q_rank}")
    check_eq(q_rank, k_rank, v_rank, "QKV rank")
    q_dtype, k_dtype, v_dtype = query.dtype, key.dtype, value.dtype
    if q_dtype not in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16),
                       np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)):
        raise NotImplementedError(f"Q must be fp16/bf16/fp8_e4m3fn/fp8_e5m2, got {q_dtype}")
    check_eq(q_dtype, k_dtype, v_dtype, "QKV dtype")
    if layout == AttentionLayout.BNTH:
        (qB, qN, qT, qH), (kB, kN, kS, kH), (vB, vN, vS, vH) = \
            query.shape, key.shape, value.shape
    else:
        assert layout == AttentionLayout.BTNH
        (qB, qT, qN, qH), (kB, kS, kN, kH), (vB, vS, vN, vH) = \
            query.shape, key.shape, value.shape
    if page_table_k is not None and page_table_v is not None:
        k_blocks, k_block_size, v_blocks, v_block_size = kB, kS, vB, vS
        kB, _, k_per_batch, _ = page_table_k.shape
        vB, _, v_per_batch, _ = page_table_v.shape
        kS, vS = k_per_batch * k_block_size, v_per_batch * v_block_size
        if kB * k_per_batch != k_blocks:
            raise ValueError("Key and page_table_k must have same number of blocks, "
                             f"got {k_blocks} vs {kB * k_per_batch}")
        if vB * v_per_batch != v_blocks:
            raise ValueError("Value and page_table_v must have same number of blocks, "
                             f"got {v_blocks} vs {vB * v_per_batch}")
    check_eq(qB, kB, vB, "QKV batch")
    if qH != kH:
        raise ValueError(f"QK must have same head dim, got {qH} vs {kH}")
    if kN != vN:
        raise ValueError(f"KV must have same number of heads, got {kN} vs {vN}")
    if kS != vS:
        raise ValueError(f"KV must have same seq length, got {kS} vs {vS}")
    if bias is not None:
        _, _, bT, bS = bias.shape
        if bT != qT or bS != vS:
            raise ValueError(f"Bias must have same seq length as QKV, got {bT} and {bS}")
    expected_rank = 2 if q_offsets is not None else 1
    for tensor, name in ((q_seqlen, "q_seqlen"), (kv_seqlen, "kv_seqlen"),
                         (q_offsets, "q_offsets"), (kv_offsets, "kv_offsets")):
        if tensor is None:
            continue
        if tensor.dtype != np.dtype("int32"):
            raise ValueError(f"{name} must have int32 datatype, got {tensor.dtype}")
        if len(tensor.shape) != expected_rank:
            raise ValueError(f"{name} must have a rank of {expected_rank}, got "
                             f"{len(tensor.shape)}")
        if tensor.shape[0] != qB:
            raise ValueError(f"{name} must have same batch as Q, got {tensor.shape[0]}")


def _on_cuda() -> bool:
    return "cuda" in str(getattr(xla_bridge.get_backend(), "platform_version", ""))


def _capability():
    d = xla_bridge.get_backend().local_devices()[0]
    return tuple(int(x) for x in d.compute_capability.split("."))


def check_compute_capability(capability) -> bool:
    """Whether the first GPU's compute capability is at least ``capability`` ("8.0")."""
    if not _on_cuda():
        return False
    return _capability() >= tuple(int(x) for x in capability.split("."))


def is_cuda_compute_capability_equal(capability) -> bool:
    if not _on_cuda():
        return False
    return _capability() == tuple(int(x) for x in capability.split("."))


def check_cudnn_version():
    """The cuDNN version of the CUDA plugin; RuntimeError without one."""
    if cuda_versions is None:
        raise RuntimeError("cuDNN is not detected.")
    return cuda_versions.cudnn_get_version()


def check_is_flash_attention(query, key, value, layout: int, cudnn_version, has_bias,
                             is_training, is_packed=False, is_paged_attention=False,
                             is_fp8=False):
    """Raises NotImplementedError for shapes cuDNN's flash attention does not take."""
    if layout == AttentionLayout.BNTH.value:
        _, _, T, qH = query.shape
        _, _, S, vH = value.shape
    else:
        _, T, _, qH = query.shape
        _, S, _, vH = value.shape
    if is_cuda_compute_capability_equal("10.3") and cudnn_version < 91100:
        raise NotImplementedError("Compute capability 10.3 requires cuDNN version >= 9.11.")
    if is_fp8:
        if not ((is_training and qH == 128 and T % 128 == 0 and S % 128 == 0) or
                (not is_training and qH <= 256 and qH % 16 == 0)):
            raise NotImplementedError(
                f"Unsupported sequence length Q {T}, KV {S} and head dim {qH} for FP8.")
        return
    h_max = 256 if check_compute_capability("9.0") else 128
    if not (qH <= h_max and qH % 8 == 0):
        raise NotImplementedError(f"The head dim must be <= {h_max} and a multiple of 8, "
                                  f"but got {qH}.")
    if is_training and has_bias and (T % 2 != 0 or S % 2 != 0):
        raise NotImplementedError(f"Unsupported sequence length Q {T}, KV {S}.")
    if is_packed and not check_compute_capability("9.0"):
        raise NotImplementedError(
            "Packed layout requires a GPU with at least Hopper architecture.")
    if qH != vH and (cudnn_version < 91000 or not check_compute_capability("9.0")):
        raise NotImplementedError(
            "mla requires cudnn version >= 9.10 and at least hopper arch.")
