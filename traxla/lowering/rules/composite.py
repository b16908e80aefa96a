"""Lowering ``composite`` to ``stablehlo.composite`` calling its decomposition function."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.composite import composite_p
from traxla.lowering.mlir import aval_type, hlo, ir, element_type
from traxla.lowering.registry import register_lowering


def _attribute(value):
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, (int, np.integer)):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if isinstance(value, (float, np.floating)):
        return ir.FloatAttr.get(ir.F32Type.get(), float(value))
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, np.dtype):  # a type attribute (as JAX's ir_attribute: bf16)
        return ir.TypeAttr.get(element_type(value))
    if isinstance(value, np.ndarray):
        return ir.DenseElementsAttr.get(np.ascontiguousarray(value),
                                        type=element_type(value.dtype), shape=value.shape)
    if isinstance(value, (tuple, list)):
        return ir.ArrayAttr.get([_attribute(v) for v in value])
    raise TypeError(f"composite: attribute value {value!r} of type {type(value)} cannot be an "
                    "MLIR attribute; use a Python scalar, a string, a NumPy array or dtype, or a tuple.")


def _composite(ctx, *args, name, attributes, version, jaxpr):
    if ctx.module.platforms is not None:
        raise NotImplementedError(f"lowering the composite '{name}' for several platforms "
                                  f"{ctx.module.platforms}: lower for one platform at a time")
    symbol = ctx.module.function_for(jaxpr, name)
    attrs = {}
    for key, leaves, treedef in attributes:
        value = treedef.unflatten([getattr(x, "val", x) for x in leaves])
        if value is not None:
            attrs[key] = _attribute(value)
    op = hlo.CompositeOp([aval_type(a) for a in ctx.avals_out], list(args),
                         name=ir.StringAttr.get(name),
                         decomposition=ir.FlatSymbolRefAttr.get(symbol),
                         composite_attributes=ir.DictAttr.get(attrs),
                         version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), version))
    return list(op.results)


register_lowering(composite_p, _composite)
