"""Batching the multihost conversions, as JAX's: the local-to-global one inserts an
unsplit entry for the batch dimension into its spec; the other is vectorized."""
from __future__ import annotations

from traxla.ir.rules.multihost import (global_array_to_host_local_array_p,
                                       host_local_array_to_global_array_p)
from traxla.ir.sharding import PartitionSpec
from traxla.batching.batch_trace import register_batching


def _local_to_global(size, vals, dims, *, global_mesh, pspec):
    d = dims[0]
    spec = list(pspec)
    if d is not None:
        spec.insert(d, None)
    return host_local_array_to_global_array_p.bind(
        vals[0], global_mesh=global_mesh, pspec=PartitionSpec(*spec)), d


def _global_to_local(size, vals, dims, **params):
    return global_array_to_host_local_array_p.bind(vals[0], **params), dims[0]


register_batching(host_local_array_to_global_array_p, _local_to_global)
register_batching(global_array_to_host_local_array_p, _global_to_local)
