"""Lowering ``device_put``: the operands themselves, moved between memories (device,
pinned host) by an ``annotate_device_placement`` custom call where the type says so."""
from __future__ import annotations

from traxla.ir.rules.device_put import device_put_p
from traxla.lowering.mlir import ir
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.ffi import custom_call


def _device_put(ctx, *xs, devices, srcs, copy_semantics):
    # a move between memories (device <-> pinned host) is annotated as JAX annotates it
    return [_annotate(x, "pinned_host" if a_out.memory_space == "host" else "device")
            if a_in.memory_space != a_out.memory_space else x
            for x, a_in, a_out in zip(xs, ctx.avals_in, ctx.avals_out)]


def _annotate(x, kind):
    op = custom_call("annotate_device_placement", result_types=[x.type], operands=[x],
                     has_side_effect=True, api_version=1)
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"_xla_buffer_placement": ir.StringAttr.get(kind)})
    return op.result


register_lowering(device_put_p, _device_put)
