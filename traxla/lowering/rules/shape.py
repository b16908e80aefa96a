"""Lowering of shape primitives."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules import shape as S
from traxla.lowering import dynamic_shapes as dyn
from traxla.lowering.mlir import (aval_type, broadcast_to, constant, hlo, i64_array, i64_array_attrs,
                                  rule_cache, tensor_type)
from traxla.lowering.registry import register_direct_op, register_lowering
from traxla.lowering.rules.elementwise import convert


def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions, sharding=None):
    return dyn.broadcast_in_dim(aval_type(ctx.aval_out), x, broadcast_dimensions,
                                ctx.aval_out.shape)


def _reshape(ctx, x, *, new_sizes, dimensions, sharding=None):
    if dimensions is not None and list(dimensions) != list(range(len(dimensions))):
        x = hlo.transpose(x, list(dimensions))
    return dyn.reshape(aval_type(ctx.aval_out), x, ctx.aval_out.shape)


def _squeeze(ctx, x, *, dimensions):
    return dyn.reshape(aval_type(ctx.aval_out), x, ctx.aval_out.shape)


def _transpose(ctx, x, *, permutation):
    return hlo.transpose(x, list(permutation))


def _rev(ctx, x, *, dimensions):
    return hlo.reverse(x, list(dimensions))


def _concatenate(ctx, *xs, dimension):
    return hlo.concatenate(list(xs), dimension)


def _pad(ctx, x, padding_value, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return hlo.pad(x, padding_value, list(lo), list(hi), list(interior))


def _slice(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    return hlo.slice(x, list(start_indices), list(limit_indices), list(strides))


def index_operands(values, avals):
    """StableHLO wants every start index in one integer type: use int32 (int64 if any is)."""
    target = dtypes.int64 if any(a.dtype in (dtypes.int64, dtypes.uint64) for a in avals) else dtypes.int32
    return [convert(v, a, target) for v, a in zip(values, avals)]


def _dynamic_slice(ctx, x, *indices, slice_sizes):
    return hlo.dynamic_slice(x, index_operands(indices, ctx.avals_in[1:]), i64_array(slice_sizes))


def _dynamic_update_slice(ctx, x, update, *indices):
    return hlo.dynamic_update_slice(x, update, index_operands(indices, ctx.avals_in[2:]))


def _iota(ctx, *, dtype, shape, dimension, sharding=None):
    return dyn.iota(tensor_type(shape, dtype), dimension, shape)


def _empty(ctx, *, shape, dtype, out_sharding):
    """Its values are unspecified: zeros, as JAX's CPU rule (its TPU and GPU rules allocate
    a buffer with a custom call)."""
    aval = ctx.aval_out
    zero = constant(np.zeros((), aval.dtype), aval.dtype)
    return broadcast_to(zero, aval.update(shape=()), aval.shape)


def _plain_static(aval) -> bool:
    """An array of a static shape and a plain dtype (the inline path's broadcasts and
    reshapes; a symbolic shape or a key array goes to the rule)."""
    if isinstance(aval.dtype, dtypes.ExtendedDType):
        return False
    for d in aval.shape:
        if type(d) is not int:
            return False
    return True


def _broadcast_in_dim_attributes(eqn, memo=None):
    if len(eqn.invars) != 1 or not _plain_static(eqn.outvars[0].aval):
        return None
    dims = eqn.params["broadcast_dimensions"]
    if memo is not None and type(dims) is tuple:  # the module's (no thread-local read)
        attrs = memo.get(dims)
        if attrs is None:
            attrs = memo[dims] = i64_array_attrs("broadcast_dimensions", dims)
        return attrs
    return i64_array_attrs("broadcast_dimensions", dims)


_NO_ATTRIBUTES: dict = {}


def _reshape_attributes(eqn, memo=None):
    dimensions = eqn.params.get("dimensions")
    if (len(eqn.invars) != 1 or not _plain_static(eqn.outvars[0].aval)
            or (dimensions is not None and list(dimensions) != list(range(len(dimensions))))):
        return None
    return _NO_ATTRIBUTES


register_direct_op(S.broadcast_in_dim_p, "stablehlo.broadcast_in_dim",
                   _broadcast_in_dim_attributes, _broadcast_in_dim)
register_direct_op(S.reshape_p, "stablehlo.reshape", _reshape_attributes, _reshape)
register_direct_op(S.squeeze_p, "stablehlo.reshape",
                   lambda eqn, memo=None: (_NO_ATTRIBUTES if _plain_static(eqn.outvars[0].aval)
                                           else None),
                   _squeeze)

def _transpose_attributes(eqn, memo=None):
    if not _plain_static(eqn.outvars[0].aval):
        return None
    return i64_array_attrs("permutation", tuple(eqn.params["permutation"]))


def _slice_attributes(eqn, memo=None):
    if not _plain_static(eqn.outvars[0].aval):
        return None
    params = eqn.params
    starts, limits = tuple(params["start_indices"]), tuple(params["limit_indices"])
    strides = tuple(params["strides"] or (1,) * len(starts))
    key = (starts, limits, strides)
    slice_attrs = rule_cache("slice")  # (starts, limits, strides) -> the op's attributes
    attrs = slice_attrs.get(key)
    if attrs is None:
        if len(slice_attrs) > 4096:
            slice_attrs.clear()
        attrs = slice_attrs[key] = {"start_indices": i64_array(starts),
                                    "limit_indices": i64_array(limits),
                                    "strides": i64_array(strides)}
    return attrs


register_direct_op(S.transpose_p, "stablehlo.transpose", _transpose_attributes, _transpose)
register_direct_op(S.slice_p, "stablehlo.slice", _slice_attributes, _slice)

for _prim, _rule in [(S.rev_p, _rev),
                     (S.concatenate_p, _concatenate), (S.pad_p, _pad),
                     (S.dynamic_slice_p, _dynamic_slice),
                     (S.dynamic_update_slice_p, _dynamic_update_slice), (S.iota_p, _iota),
                     (S.empty_p, _empty)]:
    register_lowering(_prim, _rule)


def _stack(ctx, *xs, axis):
    x_aval = ctx.avals_in[0]
    shape = list(x_aval.shape)
    shape.insert(axis, 1)
    dims = [i for i in range(len(shape)) if i != axis]
    expanded = [dyn.broadcast_in_dim(tensor_type(shape, x_aval.dtype), x, dims, shape) for x in xs]
    return expanded[0] if len(expanded) == 1 else hlo.concatenate(expanded, axis)


def _unstack(ctx, x, *, axis):
    x_aval = ctx.avals_in[0]
    outs = []
    for i, out in enumerate(ctx.avals_out):
        start = [0] * x_aval.ndim
        limit = list(x_aval.shape)
        start[axis], limit[axis] = i, i + 1
        piece = hlo.slice(x, start, limit, [1] * x_aval.ndim)
        outs.append(hlo.reshape(aval_type(out), piece))
    return outs


def _split(ctx, x, *, sizes, axis):
    x_aval = ctx.avals_in[0]
    outs, offset = [], 0
    for out in ctx.avals_out:
        start = [0] * x_aval.ndim
        limit = list(x_aval.shape)
        start[axis], limit[axis] = offset, offset + out.shape[axis]
        outs.append(hlo.slice(x, start, limit, [1] * x_aval.ndim))
        offset += out.shape[axis]
    return outs


register_lowering(S.stack_p, _stack)
register_lowering(S.unstack_p, _unstack)
register_lowering(S.split_p, _split)
