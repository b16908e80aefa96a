"""Lowering of ``ffi_call`` to ``stablehlo.custom_call``, built as JAX's ``ffi_lowering``
builds it: typed-FFI attributes in ``mhlo.backend_config`` (a dictionary; XLA reads it as
``API_VERSION_TYPED_FFI``), row-major layouts unless the user asked for others, and
``output_operand_aliases`` for ``input_output_aliases``. A user rule made with
``traxla.ffi.ffi_lowering`` uses the same builder."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from jaxlib.mlir import ir

from traxla.ir import dtypes
from traxla.ir.rules.ffi import FrozenDict, HashableArray, ffi_call_p, unwrap_attributes
from traxla.lowering.mlir import aval_type, element_type, hlo
from traxla.lowering.registry import register_lowering

_PY_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64),
                     float: np.dtype(np.float64)}


def _scalar_attribute(value: np.generic) -> ir.Attribute:
    t = element_type(value.dtype)
    if isinstance(t, ir.IntegerType):
        return ir.IntegerAttr.get(t, int(value))
    if isinstance(t, (ir.F16Type, ir.BF16Type, ir.F32Type, ir.F64Type)):
        return ir.FloatAttr.get(t, float(value))
    raise TypeError(f"Unsupported scalar attribute type: {type(value)}")


def ir_attribute(value) -> ir.Attribute:
    """A Python/NumPy value as an MLIR attribute, with JAX's ``mlir.ir_attribute`` rules."""
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, ir.Type):
        return ir.TypeAttr.get(value)
    if isinstance(value, HashableArray):
        value = value.val
    if isinstance(value, FrozenDict):
        value = dict(value)
    if type(value) in _PY_SCALAR_DTYPES:
        return _scalar_attribute(np.array(value, _PY_SCALAR_DTYPES[type(value)])[()])
    if isinstance(value, (str, bytes)):
        return ir.StringAttr.get(value)
    if isinstance(value, np.dtype):
        return ir.TypeAttr.get(element_type(value))
    if isinstance(value, (np.generic, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype == dtypes.float0:
            arr = np.zeros(arr.shape, np.bool_)
        if arr.ndim == 0:
            return _scalar_attribute(arr[()])
        if 0 in arr.strides and arr.size > 0:
            raise ValueError("NumPy arrays with zero strides are not supported as MLIR attributes")
        return ir.DenseElementsAttr.get(np.ascontiguousarray(arr), type=element_type(arr.dtype),
                                        shape=arr.shape)
    if isinstance(value, Mapping):
        return ir.DictAttr.get({k: ir_attribute(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return ir.ArrayAttr.get([ir_attribute(v) for v in value])
    raise TypeError(f"No attribute handler defined for type: {type(value)}")


def _layouts_attr(layouts) -> ir.Attribute:
    return ir.ArrayAttr.get([
        ir.DenseIntElementsAttr.get(np.atleast_1d(np.asarray(l, dtype=np.int64)),
                                    type=ir.IndexType.get()) for l in layouts])


def _row_major(aval):
    return tuple(reversed(range(len(aval.shape))))


def custom_call(target_name, *, result_types, operands, backend_config="", api_version=2,
                has_side_effect=False, operand_output_aliases=None, operand_layouts=None,
                result_layouts=None):
    """``stablehlo.custom_call`` as JAX's ``mlir.custom_call`` builds it."""
    if backend_config is None:
        config_attr = ir.StringAttr.get("")
    elif isinstance(backend_config, (str, bytes)):
        config_attr = ir.StringAttr.get(backend_config)
    elif isinstance(backend_config, dict):
        config_attr = ir.StringAttr.get("")
        api_version = 1  # with mhlo.backend_config below XLA reads it as the typed FFI
    else:
        raise ValueError(f"custom_call backend_config unexpected type: {backend_config}")
    attributes = dict(
        call_target_name=ir.StringAttr.get(target_name),
        has_side_effect=ir.BoolAttr.get(has_side_effect),
        backend_config=config_attr,
        api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), api_version),
        called_computations=ir.ArrayAttr.get([]),
    )
    if operand_output_aliases is not None:
        attributes["output_operand_aliases"] = ir.ArrayAttr.get([
            hlo.OutputOperandAlias.get(
                output_tuple_indices=[o] if len(result_types) > 1 else [],
                operand_index=i, operand_tuple_indices=[])
            for i, o in operand_output_aliases.items()])
    if operand_layouts is not None:
        attributes["operand_layouts"] = _layouts_attr(operand_layouts)
    if result_layouts is not None:
        attributes["result_layouts"] = _layouts_attr(result_layouts)
    op = hlo.CustomCallOp.build_generic(results=list(result_types), operands=list(operands),
                                        attributes=attributes)
    if isinstance(backend_config, dict):
        op.operation.attributes["mhlo.backend_config"] = ir.DictAttr.get(backend_config)
    return op


def build_ffi_lowering_function(target_name, *, operand_layouts=None, result_layouts=None,
                                backend_config=None, skip_ffi_layout_processing=False,
                                **lowering_args):
    """A function ``(ctx, *operands, **attributes) -> op`` emitting the custom call."""
    def lowering_op(ctx, *operands, **params):
        kwargs = dict(lowering_args)
        kwargs.setdefault("api_version", 4)
        if kwargs["api_version"] >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            kwargs["backend_config"] = dict(backend_config or {},
                                            **{k: ir_attribute(v) for k, v in params.items()})
        else:
            if params:
                raise ValueError(
                    "The use of ffi_call attributes requires a custom call API version of at "
                    f"least 4; got api_version={kwargs['api_version']}.")
            kwargs["backend_config"] = backend_config
        kwargs.setdefault("result_types", [aval_type(a) for a in ctx.avals_out])
        if not skip_ffi_layout_processing:
            kwargs["operand_layouts"] = (
                [_row_major(a) for a in ctx.avals_in] if operand_layouts is None else
                [_row_major(a) if l is None else tuple(l)
                 for a, l in zip(ctx.avals_in, operand_layouts)])
            kwargs["result_layouts"] = (
                [_row_major(a) for a in ctx.avals_out] if result_layouts is None else
                [_row_major(a) if l is None else tuple(l)
                 for a, l in zip(ctx.avals_out, result_layouts)])
        return custom_call(target_name, operands=operands, **kwargs)
    return lowering_op


def ffi_lowering(target_name, **options):
    """A lowering rule (returning the custom call's results) for ``target_name``."""
    build = build_ffi_lowering_function(target_name, **options)

    def rule(ctx, *operands, **params):
        return list(build(ctx, *operands, **params).results)
    return rule


def _ffi_call_lowering(ctx, *operands, target_name, has_side_effect, input_layouts,
                       output_layouts, input_output_aliases, custom_call_api_version,
                       legacy_backend_config, attributes, **_):
    rule = ffi_lowering(target_name, has_side_effect=has_side_effect,
                        operand_layouts=input_layouts, result_layouts=output_layouts,
                        operand_output_aliases=dict(input_output_aliases),
                        api_version=custom_call_api_version,
                        backend_config=legacy_backend_config)
    return rule(ctx, *operands, **unwrap_attributes(attributes))


register_lowering(ffi_call_p, _ffi_call_lowering)
