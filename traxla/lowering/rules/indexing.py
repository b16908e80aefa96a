"""Lowering of gather, the scatter family, sort and cumulative reductions."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.indexing import CUMULATIVE, GatherScatterMode, P, SCATTERS, sort_p
from traxla.lowering.mlir import aval_type, broadcast_to, constant, hlo, ir, tensor_type
from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.elementwise import compare, convert
from traxla.lowering.rules.reduction import MONOIDS, _highest, _lowest


def _bounds(operand_shape, slice_sizes, index_map, index_dtype):
    """Per index component: the largest valid start (dim size - slice size)."""
    return [operand_shape[d] - slice_sizes[d] for d in index_map]


def _clamp_indices(indices, idx_aval, upper):
    """Clamps each index vector component to [0, upper[k]]."""
    dtype = idx_aval.dtype
    lo = broadcast_to(constant(np.zeros((), dtype), dtype), idx_aval.update(shape=()), idx_aval.shape)
    hi_vec = constant(np.asarray(upper, dtype=dtype), dtype)
    hi = hlo.broadcast_in_dim(aval_type(idx_aval), hi_vec, [idx_aval.ndim - 1])
    return hlo.clamp(lo, indices, hi) if idx_aval.ndim else indices


def _in_bounds_mask(indices, idx_aval, upper):
    """bool[batch]: every component of the index vector within [0, upper]."""
    dtype = idx_aval.dtype
    zero = broadcast_to(constant(np.zeros((), dtype), dtype), idx_aval.update(shape=()), idx_aval.shape)
    hi = hlo.broadcast_in_dim(aval_type(idx_aval), constant(np.asarray(upper, dtype=dtype), dtype),
                              [idx_aval.ndim - 1])
    ok = hlo.and_(compare(indices, zero, "GE", dtype), compare(indices, hi, "LE", dtype))
    batch = idx_aval.shape[:-1]
    red = hlo.ReduceOp([tensor_type(batch, dtypes.bool_)], [ok],
                       [constant(np.array(True))], [idx_aval.ndim - 1])
    block = red.regions[0].blocks.append(tensor_type((), dtypes.bool_), tensor_type((), dtypes.bool_))
    with ir.InsertionPoint(block):
        hlo.return_([hlo.and_(*block.arguments)])
    return red.result


def _default_fill(dtype):
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_signed_int(dtype):
        return np.iinfo(dtype).min
    if dtypes.is_unsigned_int(dtype):
        return np.iinfo(dtype).max
    return True


def _gather(ctx, operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
            unique_indices, mode, fill_value):
    dn = dimension_numbers
    op_aval, idx_aval = ctx.avals_in
    out_aval = ctx.aval_out
    if 0 in out_aval.shape:  # no indices: the slice sizes may exceed an empty operand (the
        # typing rule allows it, as JAX's), which StableHLO's gather refuses; JAX emits zeros
        return broadcast_to(constant(np.zeros((), out_aval.dtype), out_aval.dtype),
                            out_aval.update(shape=()), out_aval.shape)
    mode = GatherScatterMode.from_any(mode)
    upper = _bounds(op_aval.shape, slice_sizes, dn.start_index_map, idx_aval.dtype)
    gather_indices = indices
    if mode in (GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP):
        gather_indices = _clamp_indices(indices, idx_aval, upper)
    gdn = hlo.GatherDimensionNumbers.get(
        offset_dims=list(dn.offset_dims), collapsed_slice_dims=list(dn.collapsed_slice_dims),
        operand_batching_dims=list(dn.operand_batching_dims),
        start_indices_batching_dims=list(dn.start_indices_batching_dims),
        start_index_map=list(dn.start_index_map), index_vector_dim=idx_aval.ndim - 1)
    out = hlo.gather(operand, gather_indices, gdn, ir.DenseI64ArrayAttr.get(list(slice_sizes)),
                     indices_are_sorted=bool(indices_are_sorted))
    if mode is GatherScatterMode.FILL_OR_DROP:
        mask = _in_bounds_mask(indices, idx_aval, upper)
        batch_dims = [d for d in range(out_aval.ndim) if d not in dn.offset_dims]
        mask = hlo.broadcast_in_dim(tensor_type(out_aval.shape, dtypes.bool_), mask, batch_dims)
        fill = _default_fill(out_aval.dtype) if fill_value is None else fill_value
        fill = broadcast_to(constant(np.asarray(fill).astype(out_aval.dtype), out_aval.dtype),
                            out_aval.update(shape=()), out_aval.shape)
        out = hlo.select(mask, out, fill)
    return out


register_lowering(P["gather"], _gather)

_COMBINE = {"scatter": None, "scatter-add": hlo.add, "scatter-mul": hlo.multiply,
            "scatter-min": hlo.minimum, "scatter-max": hlo.maximum}


def _scatter(name):
    combine = _COMBINE[name]

    def rule(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, mode, update_jaxpr, update_consts):
        dn = dimension_numbers
        op_aval, idx_aval, upd_aval = ctx.avals_in
        mode = GatherScatterMode.from_any(mode)
        if mode is GatherScatterMode.CLIP:
            window = [1] * op_aval.ndim
            window_dims = [d for d in range(op_aval.ndim)
                           if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
            for d, w in zip(window_dims, dn.update_window_dims):
                window[d] = upd_aval.shape[w]
            upper = [op_aval.shape[d] - window[d] for d in dn.scatter_dims_to_operand_dims]
            indices = _clamp_indices(indices, idx_aval, upper)
        sdn = hlo.ScatterDimensionNumbers.get(
            update_window_dims=list(dn.update_window_dims),
            inserted_window_dims=list(dn.inserted_window_dims),
            input_batching_dims=list(dn.operand_batching_dims),
            scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
            scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
            index_vector_dim=idx_aval.ndim - 1)
        op = hlo.ScatterOp([aval_type(op_aval)], [operand], indices, [updates], sdn,
                           indices_are_sorted=ir.BoolAttr.get(bool(indices_are_sorted)),
                           unique_indices=ir.BoolAttr.get(bool(unique_indices)))
        scalar = tensor_type((), op_aval.dtype)
        block = op.update_computation.blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            old, new = block.arguments
            if combine is None and update_jaxpr is not None:  # scatter_apply's function
                consts = [const_value(v.aval, c)
                          for v, c in zip(update_jaxpr.constvars, update_consts)]
                hlo.return_(emit_jaxpr(ctx.module, update_jaxpr, consts, [old, new]))
            else:
                hlo.return_([new if combine is None else combine(old, new)])
        return op.results[0]
    return rule


for _name in SCATTERS:
    register_lowering(P[_name], _scatter(_name))


def _canonical_float_key(x, dtype):
    """-0.0 -> 0.0 and every NaN -> +NaN, so TOTALORDER sorts as NumPy does."""
    zero = constant(np.zeros((), dtype), dtype)
    x = hlo.select(compare(x, zero, "EQ", dtype), zero, x)
    nan = constant(np.array(np.nan, dtype), dtype)
    return hlo.select(compare(x, x, "NE", dtype), nan, x)


def _sort_compare(x, y, direction, dtype):
    """``x direction y`` in the sort's order: floats by TOTALORDER of their canonical keys."""
    if dtypes.is_inexact(dtype):
        x, y = _canonical_float_key(x, dtype), _canonical_float_key(y, dtype)
        return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"))
    return compare(x, y, direction, dtype)


def _sort(ctx, *operands, dimension, is_stable, num_keys):
    types = [aval_type(a) for a in ctx.avals_in]
    op = hlo.SortOp(types, list(operands), dimension=ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), dimension), is_stable=ir.BoolAttr.get(bool(is_stable)))
    scalars = []
    for a in ctx.avals_in:
        scalars += [tensor_type((), a.dtype)] * 2
    block = op.comparator.blocks.append(*scalars)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        keys = []
        for i in range(num_keys):
            x, y, dt = args[2 * i], args[2 * i + 1], ctx.avals_in[i].dtype
            if dtypes.is_complex(dt):  # as JAX: the real part, then the imaginary part
                real_dt = np.dtype(np.float32 if dt == np.complex64 else np.float64)
                keys += [(hlo.real(x), hlo.real(y), real_dt), (hlo.imag(x), hlo.imag(y), real_dt)]
            else:
                keys.append((x, y, dt))
        x, y, dt = keys[-1]
        pred = _sort_compare(x, y, "LT", dt)
        for x, y, dt in reversed(keys[:-1]):
            pred = hlo.or_(_sort_compare(x, y, "LT", dt),
                           hlo.and_(_sort_compare(x, y, "EQ", dt), pred))
        hlo.return_([pred])
    return list(op.results)


register_lowering(sort_p, _sort)


def _cumulative(name):
    def rule(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        dtype = aval.dtype
        n = aval.shape[axis]
        if name == "cumlogsumexp":
            op, init = _logaddexp, -np.inf
        else:
            op, init_fn = MONOIDS[{"cumsum": "reduce_sum", "cumprod": "reduce_prod",
                                   "cummax": "reduce_max", "cummin": "reduce_min"}[name]]
            init = init_fn(dtype)
        window = [1] * aval.ndim
        window[axis] = max(n, 1)
        padding = [[0, 0] for _ in range(aval.ndim)]
        padding[axis] = [0, n - 1] if reverse else [n - 1, 0]
        red = hlo.ReduceWindowOp([aval_type(aval)], [x],
                                 [constant(np.array(init).astype(dtype), dtype)], window,
                                 padding=ir.DenseIntElementsAttr.get(
                                     np.asarray(padding, np.int64), shape=(aval.ndim, 2)))
        scalar = tensor_type((), dtype)
        block = red.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([op(*block.arguments)])
        return red.results[0]
    return rule


def _logaddexp(a, b):
    """JAX's logaddexp: a NaN difference (-inf and -inf, or inf and inf) gives a + b."""
    m = hlo.maximum(a, b)
    delta = hlo.subtract(a, b)
    diff = hlo.negate(hlo.abs(delta))
    is_nan = hlo.compare(delta, delta, hlo.ComparisonDirectionAttr.get("NE"),
                         compare_type=hlo.ComparisonTypeAttr.get("FLOAT"))
    return hlo.select(is_nan, hlo.add(a, b),
                      hlo.add(m, hlo.log_plus_one(hlo.exponential(diff))))


for _name in CUMULATIVE:
    register_lowering(P[_name], _cumulative(_name))
del convert, _lowest, _highest
