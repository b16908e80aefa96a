"""Mosaic lowering rule for ``masked_swap`` (``pltpu.store(ref, val, mask=m)``), as JAX
0.10.2's ``_masked_swap_lowering_rule`` emits it for a VMEM ref: the old value loaded
(``vector.load``, ``tpu.strided_load`` for strides), value and mask shape-cast to the
memory's slice where integer indexers drop dimensions, then ``tpu.vector_store`` with the
mask."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.rules.refs import RefChain
from traxla.lowering.mosaic.dialects import ir, tpu, vector
from traxla.lowering.mosaic.kernel import element_type, ensure_value, register, value_type
from traxla.lowering.mosaic.memory import transformed
from traxla.lowering.mosaic.rules import _require_vmem, _space, _starts


@register("masked_swap")
def _masked_swap(ctx, ref, val, mask, *idx, tree):
    ref_aval, val_aval, mask_aval = ctx.avals_in[:3]
    aval_out = ctx.avals_out[0]
    if isinstance(tree, RefChain):  # (a reshaped view: its links, then the indexer)
        ref, idx, tree = transformed(ctx, ref, idx, tree)
        ref_aval = ShapedArray(tuple(ir.MemRefType(ref.type).shape), ref_aval.dtype)
    val = ensure_value(val, val_aval)
    mask = ensure_value(mask, mask_aval)
    starts = _starts(ctx, ref, ref_aval, idx, tree)
    indices = [s[0] for s in starts]
    strides = [s[3] for s in starts]
    space = _space(ref)
    if space == "#tpu.memory_space<smem>":
        raise ValueError("SMEM store does not support masks")
    _require_vmem(space, "Loads and stores are", val_aval)
    mem_shape = [s[1] for s in starts]
    mem_type = ir.VectorType.get(mem_shape, element_type(aval_out.dtype))
    strided = any(st != 1 for st in strides)
    if strided:
        raise NotImplementedError("masked swap with strided store")
    old = vector.load(mem_type, ref, indices)
    if tuple(mem_shape) != tuple(aval_out.shape):
        old = vector.shape_cast(value_type(aval_out), old)
        val = vector.shape_cast(mem_type, val)
        mask = vector.shape_cast(ir.VectorType.get(mem_shape, ir.IntegerType.get_signless(1)),
                                 mask)
    tpu.vector_store(val, ref, indices, strides=[], mask=mask)
    return old
