"""Batching ``all_to_all`` over a non-mesh batch axis: the split and concat axes shift
past the batch dim (JAX's ``_all_to_all_batcher``)."""
from __future__ import annotations

from traxla.ir.rules.all_to_all import all_to_all_p
from traxla.batching.batch_trace import register_batching


def _all_to_all(size, vals, dims, *, split_axis, concat_axis, **params):
    d = dims[0]
    return all_to_all_p.bind(vals[0], split_axis=split_axis + (d <= split_axis),
                             concat_axis=concat_axis + (d <= concat_axis), **params), d


register_batching(all_to_all_p, _all_to_all)
