"""Lowering ``all_to_all`` to StableHLO's all_to_all over the named axes' device groups."""
from __future__ import annotations

from traxla.ir.rules.all_to_all import all_to_all_p, ragged_all_to_all_p
from traxla.lowering.mlir import hlo, ir
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.collectives import _channel, _groups_attr, _names, replica_groups


def _all_to_all(ctx, x, *, axis_name, split_axis, concat_axis, axis_index_groups, tiled,
                axis_size):
    mesh = ctx.module.mesh_stack[-1]
    groups = replica_groups(mesh, _names(axis_name))
    if mesh.size == 1 or len(groups[0]) == 1:
        return x
    i64 = ir.IntegerType.get_signless(64)
    op = hlo.AllToAllOp([x], split_dimension=ir.IntegerAttr.get(i64, split_axis),
                        concat_dimension=ir.IntegerAttr.get(i64, concat_axis),
                        split_count=ir.IntegerAttr.get(i64, len(groups[0])),
                        replica_groups=_groups_attr(groups), channel_handle=_channel(ctx))
    return op.results[0]


register_lowering(all_to_all_p, _all_to_all)


def _ragged_all_to_all(ctx, *operands, axis_name, axis_index_groups):
    """JAX's lowering: a ``ragged_all_to_all`` custom call (API version 4) with the replica
    groups and a channel in its backend config (XLA:CPU cannot compile it, as under JAX)."""
    mesh = ctx.module.mesh_stack[-1]
    groups = replica_groups(mesh, _names(axis_name))
    if axis_index_groups is not None:
        groups = [[g[i] for i in sub] for g in groups for sub in axis_index_groups]
    if len({len(g) for g in groups}) != 1:
        raise ValueError("Replica groups must be equally sized")
    i64 = ir.IntegerType.get_signless(64)
    config = {"replica_groups": _groups_attr(groups),
              "channel_id": ir.IntegerAttr.get(i64, 1)}  # JAX's COLLECTIVE_CHANNEL_ID
    return hlo.CustomCallOp(
        [operands[1].type], list(operands), call_target_name=ir.StringAttr.get(
            "ragged_all_to_all"), backend_config=ir.DictAttr.get(config),
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4)).results[0]


register_lowering(ragged_all_to_all_p, _ragged_all_to_all)
