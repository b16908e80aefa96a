"""Lowering of ``pallas_call`` (a Pallas kernel compiled for a TPU) to one
``stablehlo.custom_call @tpu_custom_call``, built as JAX 0.10.2 builds it: the kernel's
Mosaic module (``traxla.lowering.mosaic``), verified, serialized with the Mosaic serde
pass and base64-encoded into the backend config, with the compiler parameters beside it;
``kernel_name``, row-major operand and result layouts, the aliases of
``input_output_aliases``. In a module for the CPU the equation raises JAX's error (only
interpret mode runs there); on a GPU, Triton and Mosaic GPU are not implemented."""
from __future__ import annotations

import base64
import json

import numpy as np

from traxla.ir import dtypes
from traxla.ir.jaxpr import subjaxprs
from traxla.ir.rules.pallas import pallas_call_p
from traxla.lowering.mlir import aval_type, ir
from traxla.lowering.registry import mark_platform_sensitive, register_lowering
from traxla.lowering.rules.elementwise import convert
from traxla.lowering.rules.ffi import custom_call


def _row_major(aval):
    return tuple(range(len(aval.shape) - 1, -1, -1))


def backend_config(body: bytes, spec, has_communication: bool = False) -> str:
    """The ``tpu_custom_call`` backend config (JAX's ``CustomCallBackendConfig.to_json``,
    for the fields a TensorCore kernel sets)."""
    params = spec.compiler_params
    parts = ['{"custom_call_config": {"body": "', base64.b64encode(body).decode("ascii"), '"']
    if has_communication:  # (remote DMAs and semaphores: JAX's has_communication)
        parts.append(', "has_communication": true')
    if params is not None and getattr(params, "collective_id", None) is not None:
        parts.append(f', "collective_id": {int(params.collective_id)}')
    if spec.cost_estimate is not None:  # (JAX's _compact_json_object, newlines and all)
        parts.append(', "cost_estimate": ' + json.dumps(
            dict(spec.cost_estimate), sort_keys=True, indent=0, separators=(",", ":")))
    if params is not None and getattr(params, "allow_input_fusion", None) is not None:
        parts.append(', "serialization_format": 1, "needs_layout_passes": true')
        parts.append(', "allow_input_fusion": [' + ",".join(
            "true" if v else "false" for v in params.allow_input_fusion) + "]")
    else:
        parts.append(', "serialization_format": 1, "needs_layout_passes": true')
    if params is not None and getattr(params, "internal_scratch_in_bytes", None) is not None:
        parts.append(f', "internal_scratch_in_bytes": {int(params.internal_scratch_in_bytes)}')
    for flag in ("disable_bounds_checks", "disable_semaphore_checks", "skip_device_barrier"):
        if params is not None and getattr(params, flag, False):
            parts.append(f', "{flag}": true')
    parts.append("}")
    if spec.vmem_limit_bytes is not None:
        parts.append(', "scoped_memory_configs": [{"memory_space":1, "offset": 0, "size": '
                     f'{int(spec.vmem_limit_bytes)}}}]')
    parts.append("}")
    return "".join(parts)


def mosaic_body(spec, mesh=None, communication=None) -> bytes:
    """The kernel's Mosaic module, verified and serialized (``communication``: a list
    told whether the kernel reaches other devices, as Mosaic finds)."""
    from traxla.lowering.mosaic import dialects
    from traxla.lowering.mosaic.kernel import MosaicLoweringError, build_module
    with dialects.context(), dialects.ir.Location.unknown():
        module = build_module(spec, mesh)
        if communication is not None:
            communication.append(dialects.has_communication(module))
        try:
            module.operation.verify()
        except dialects.ir.MLIRError as e:
            raise MosaicLoweringError(
                f"Pallas kernel `{spec.name}` (called at {spec.source}): the Mosaic module "
                f"traxla built does not verify: {e}") from None
        return dialects.serialize(module)


def _pallas_call_lowering(ctx, *operands, kernel, out_avals, input_output_aliases, **_):
    platform = ctx.module.platform
    if platform == "cpu":
        raise ValueError("Only interpret mode is supported on CPU backend.")
    if platform != "tpu":
        raise NotImplementedError(
            f"traxla does not compile Pallas kernels for the {platform} backend (Triton, "
            "Mosaic GPU); pass interpret=True to run the kernel as traxla operations")
    communication = []
    mesh = ctx.module.mesh_stack[-1] if ctx.module.mesh_stack else None
    body = mosaic_body(kernel, mesh, communication)
    # booleans cross the kernel's boundary as int32 (JAX's BOOL_MEMREF_TYPE): converted
    # before the call, compared with 0 after it
    int32 = np.dtype(np.int32)
    as_int = [a.update(dtype=int32) if dtypes.is_bool(a.dtype) else a for a in ctx.avals_in]
    operands = [convert(x, a, int32) if dtypes.is_bool(a.dtype) else x
                for x, a in zip(operands, ctx.avals_in)]
    outs_int = [a.update(dtype=int32) if dtypes.is_bool(a.dtype) else a
                for a in ctx.avals_out]
    op = custom_call(
        "tpu_custom_call", result_types=[aval_type(a) for a in outs_int],
        operands=list(operands), backend_config=backend_config(body, kernel,
                                                               communication[0]),
        api_version=1, has_side_effect=False,
        # (the aliases count the call's arrays: after the traced grid sizes, first here)
        operand_output_aliases={i + sum(g is None for g in kernel.grid): o
                                for i, o in input_output_aliases},
        operand_layouts=[_row_major(a) for a in as_int],
        result_layouts=[_row_major(a) for a in outs_int])
    op.operation.attributes["kernel_name"] = ir.StringAttr.get(kernel.name)
    metadata = dict(kernel.metadata or ())
    axes = _mesh_axes(kernel.jaxpr.jaxpr, mesh)
    if axes:  # (JAX's: the mesh axes the kernel names, a JSON list in the metadata)
        metadata["mesh_axes"] = json.dumps(axes)
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(
        {"kernel_metadata": ir.StringAttr.get(json.dumps(
            metadata, sort_keys=True, indent=0, separators=(",", ":")))})
    return [convert(r, a, np.dtype(np.bool_)) if dtypes.is_bool(o.dtype) else r
            for r, a, o in zip(op.results, outs_int, ctx.avals_out)]


def _mesh_axes(jaxpr, mesh) -> list:
    """The axes of the enclosing ``shard_map``'s mesh the kernel asks its index along
    (``lax.axis_index``), sorted."""
    if mesh is None:
        return []
    found = set()

    def visit(j):
        for eqn in j.eqns:
            if eqn.primitive.name == "axis_index":
                name = eqn.params["axis_name"]
                found.update(name if isinstance(name, (tuple, list)) else (name,))
            for sub in subjaxprs(eqn.params):
                visit(sub)

    visit(jaxpr)
    return sorted(a for a in found if a in mesh.axis_names)


register_lowering(pallas_call_p, _pallas_call_lowering)
mark_platform_sensitive(pallas_call_p)
