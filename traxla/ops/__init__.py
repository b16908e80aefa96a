"""``jax.ops``: segment reductions (``segment_sum``, ``segment_prod``, ``segment_max``,
``segment_min``), as JAX writes them: a scatter of ``data`` into an array of the reduction's
identity, one row per segment (optionally in buckets, reduced afterwards)."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla import numpy as jnp
from traxla.ir import dtypes
from traxla.lax import slicing
from traxla.numpy._indexing import _scatter_update
from traxla.numpy._promotion import check_arraylike
from traxla.tracer import Tracer


def _identity(scatter_op, dtype):
    if scatter_op is slicing.scatter_add:
        return 0
    if scatter_op is slicing.scatter_mul:
        return 1
    if dtype == np.bool_:
        return scatter_op is slicing.scatter_min
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return info.max if scatter_op is slicing.scatter_min else info.min
    return float("inf") if scatter_op is slicing.scatter_min else -float("inf")


def _segment_update(name, data, segment_ids, scatter_op, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, reducer, mode, out_sharding):
    check_arraylike(name, data, segment_ids)
    if out_sharding is not None:
        raise NotImplementedError(f"{name}(out_sharding=...) is not supported by traxla: "
                                  "place the result with jax.device_put or a sharding constraint.")
    mode = slicing.GatherScatterMode.FILL_OR_DROP if mode is None else mode
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        num_segments = np.max(segment_ids) + 1
    if isinstance(num_segments, Tracer):
        num_segments._concretization_error(
            "int", f"The problem arose with the {name}() `num_segments` argument.")
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    if bucket_size is None:
        out = jnp.full((num_segments,) + data.shape[1:], _identity(scatter_op, dtype),
                       dtype=dtype)
        return _scatter_update(out, segment_ids, data, scatter_op, indices_are_sorted,
                               unique_indices, normalize_indices=False, mode=mode)
    # buckets of bucket_size ids, reduced afterwards (better rounding for sums and products)
    num_buckets = -(-segment_ids.size // bucket_size)
    out = jnp.full((num_buckets, num_segments) + data.shape[1:], _identity(scatter_op, dtype),
                   dtype=dtype)
    out = _scatter_update(out, np.index_exp[jnp.arange(segment_ids.shape[0]) // bucket_size,
                                            segment_ids[None, :]],
                          data, scatter_op, indices_are_sorted, unique_indices,
                          normalize_indices=False, mode=mode)
    return reducer(out, axis=0).astype(dtype)


def _segment_reduction(name, scatter_op, reducer):
    def reduction(data, segment_ids, num_segments=None, indices_are_sorted=False,
                  unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
        return _segment_update(name, data, segment_ids, scatter_op, num_segments,
                               indices_are_sorted, unique_indices, bucket_size, reducer, mode,
                               out_sharding)
    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = (f"Computes the {name.split('_')[1]} within segments of an array "
                         f"(JAX's ``jax.ops.{name}``).")
    return reduction


segment_sum = _segment_reduction("segment_sum", slicing.scatter_add, jnp.sum)
segment_prod = _segment_reduction("segment_prod", slicing.scatter_mul, jnp.prod)
segment_max = _segment_reduction("segment_max", slicing.scatter_max, jnp.max)
segment_min = _segment_reduction("segment_min", slicing.scatter_min, jnp.min)

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]
