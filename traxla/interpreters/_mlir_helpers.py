"""The MLIR helpers of ``jax.interpreters.mlir`` that lowering rules written for JAX call:
types of avals and dtypes, integer attributes, flattening of value lists, module printing.
(JAX's own lowering machinery, ``jaxpr_subcomp``, ``lower_jaxpr_to_module``..., is not
traxla's: those names raise NotImplementedError, see ``mlir.py``.)"""
from __future__ import annotations

import io
import typing
from collections.abc import Callable, Sequence

import numpy as np

from traxla.lowering.mlir import _new_context, aval_type, element_type, hlo, ir

# jaxlib's stream/host-transfer kinds of send/recv (xla::ChannelHandle::ChannelType)
DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3

Value = ir.Value
Token = ir.Value
LoweringRule = Callable[..., Sequence[ir.Value]]


def aval_to_ir_type(aval) -> ir.Type:
    """The MLIR type of a value of ``aval`` (a ranked tensor; a token for a token)."""
    return aval_type(aval)


def aval_to_ir_types(aval) -> tuple:
    return (aval_type(aval),)


def dtype_to_ir_type(dtype) -> ir.Type:
    return element_type(np.dtype(dtype))


def i32_attr(i) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), i)


def i64_attr(i) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)


def dense_int_array(xs) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get(np.asarray(xs, np.int64).tolist())


def dense_int_elements(xs) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64))


def token_type() -> ir.Type:
    return hlo.TokenType.get()


def flatten_ir_values(xs) -> list:
    """``xs``, values or sequences of values, as one flat list of values."""
    out = []
    for x in xs:
        if isinstance(x, ir.Value):
            out.append(x)
        else:
            out.extend(x)
    return out


def flatten_ir_types(xs) -> list:
    out = []
    for x in xs:
        if isinstance(x, ir.Type):
            out.append(x)
        else:
            out.extend(x)
    return out


def unflatten_ir_values_like_types(xs, ys) -> list:
    """Groups the flat values ``xs`` as the types ``ys`` (a type: one value; a sequence of
    types: a sequence of as many values)."""
    xs = iter(xs)
    out = []
    for y in ys:
        if isinstance(y, ir.Type):
            out.append(next(xs))
        else:
            out.append([next(xs) for _ in y])
    sentinel = object()
    if next(xs, sentinel) is not sentinel:
        raise ValueError("unflatten_ir_values_like_types: more values than types")
    return out


def make_ir_context() -> ir.Context:
    """A new MLIR context with the dialects traxla's lowering uses loaded."""
    return _new_context()


def module_to_string(module: ir.Module, enable_debug_info=None) -> str:
    """The module's text; with locations unless ``enable_debug_info`` is false (JAX's default
    is its ``jax_include_debug_info_in_dumps`` flag, true)."""
    out = io.StringIO()
    module.operation.print(file=out, enable_debug_info=enable_debug_info is None
                           or bool(enable_debug_info))
    return out.getvalue()


def module_to_bytecode(module: ir.Module) -> bytes:
    out = io.BytesIO()
    module.operation.write_bytecode(file=out)
    return out.getvalue()


MeshAxisName = typing.Any
