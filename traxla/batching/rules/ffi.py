"""Batching of ``ffi_call`` by its ``vmap_method``, as JAX's ``ffi_batching_rule``:
``sequential``/``sequential_unrolled`` scan over the batch (one native call per lane),
``expand_dims``/``broadcast_all`` call once with a leading batch axis on every operand
(size 1 or the batch size for unbatched ones), ``legacy_vectorized`` calls once on the
batched operands as they are."""
from __future__ import annotations

from traxla import lax
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.ffi import ffi_call_p
from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules._util import scan_lanes


def _batched_layout(layout):
    return None if layout is None else tuple(n + 1 for n in layout) + (0,)


def _ffi_call_batched(size, vals, dims, *, vmap_method, result_avals, **params):
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
    sequential = vmap_method in ("sequential", "sequential_unrolled")
    if not sequential and params.get("output_layouts") is not None:
        params["output_layouts"] = tuple(map(_batched_layout, params["output_layouts"]))
    if vmap_method == "legacy_vectorized":
        if params.get("input_layouts") is not None:
            params["input_layouts"] = tuple(
                l if d is None else _batched_layout(l)
                for l, d in zip(params["input_layouts"], dims))
        out = ffi_call_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                              **params)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        lead = size if vmap_method == "broadcast_all" else 1
        args = [lax.broadcast(x, (lead,)) if d is None else x for x, d in zip(args, dims)]
        if params.get("input_layouts") is not None:
            params["input_layouts"] = tuple(map(_batched_layout, params["input_layouts"]))
        out = ffi_call_p.bind(*args, vmap_method=vmap_method, result_avals=batched_avals,
                              **params)
    elif sequential:
        out = scan_lanes(lambda *ops: ffi_call_p.bind(*ops, vmap_method=vmap_method,
                                                      result_avals=result_avals, **params),
                         args, dims, unroll=vmap_method == "sequential_unrolled")
    else:
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    return list(out), [0] * len(out)


register_batching(ffi_call_p, _ffi_call_batched)
