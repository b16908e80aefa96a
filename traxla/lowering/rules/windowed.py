"""Lowering of the windowed reductions, the generic ``reduce`` and the max-pool
derivatives to ``stablehlo.reduce_window`` / ``reduce`` / ``select_and_scatter``."""
from __future__ import annotations

import functools

import numpy as np

from traxla.ir.rules.windowed import P
from traxla.lowering.mlir import aval_type, constant, hlo, i64_array, ir, tensor_type
from traxla.lowering.module import const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.elementwise import compare
from traxla.lowering.rules.reduction import MONOIDS


def _padding_attr(padding):
    pads = np.asarray(padding, np.int64).reshape(len(padding), 2)
    return ir.DenseIntElementsAttr.get(pads, shape=(len(padding), 2))


def reduce_window(out_avals, operands, inits, init_avals, body, *, window_dimensions,
                  window_strides, padding, base_dilation, window_dilation):
    """One ``stablehlo.reduce_window``; ``body(*block_args)`` returns the combined values."""
    op = hlo.ReduceWindowOp([aval_type(a) for a in out_avals], list(operands), list(inits),
                            window_dimensions=i64_array(window_dimensions),
                            window_strides=i64_array(window_strides),
                            base_dilations=i64_array(base_dilation),
                            window_dilations=i64_array(window_dilation),
                            padding=_padding_attr(padding))
    scalars = [tensor_type((), a.dtype) for a in init_avals]
    block = op.regions[0].blocks.append(*(scalars + scalars))
    with ir.InsertionPoint(block):
        hlo.return_(list(body(*block.arguments)))
    return list(op.results)


def _monoid(name):
    combine, identity = MONOIDS[name.replace("reduce_window", "reduce")]

    def rule(ctx, x, **params):
        aval = ctx.avals_in[0]
        init = constant(np.array(identity(aval.dtype)).astype(aval.dtype), aval.dtype)
        scalar = aval.update(shape=())
        return reduce_window([ctx.aval_out], [x], [init], [scalar],
                             lambda a, b: [combine(a, b)], **params)[0]
    return rule


for _name in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    register_lowering(P[_name], _monoid(_name))


def _reduce_window_generic(ctx, *args, jaxpr, consts, **params):
    n = len(args) // 2
    init_avals = ctx.avals_in[n:]

    def body(*block_args):
        const_vals = [const_value(v.aval, c) for v, c in zip(jaxpr.constvars, consts)]
        return emit_jaxpr(ctx.module, jaxpr, const_vals, list(block_args))
    return reduce_window(ctx.avals_out, args[:n], args[n:], init_avals, body, **params)


register_lowering(P["reduce_window"], _reduce_window_generic)


def _reduce_generic(ctx, *args, computation, jaxpr, dimensions):
    n = len(args) // 2
    init_avals = ctx.avals_in[n:]
    op = hlo.ReduceOp([aval_type(a) for a in ctx.avals_out], list(args[:n]), list(args[n:]),
                      list(dimensions))
    scalars = [tensor_type((), a.dtype) for a in init_avals]
    block = op.regions[0].blocks.append(*(scalars + scalars))
    with ir.InsertionPoint(block):
        const_vals = [const_value(v.aval, c) for v, c in zip(jaxpr.jaxpr.constvars, jaxpr.consts)]
        hlo.return_(emit_jaxpr(ctx.module, jaxpr.jaxpr, const_vals, list(block.arguments)))
    return list(op.results)


register_lowering(P["reduce"], _reduce_generic)


def _select_identity(select_prim, dtype):
    """The value a window's selection never prefers: -inf for ``ge`` (max), +inf for ``le``."""
    ident = MONOIDS["reduce_max" if select_prim.name == "ge" else "reduce_min"][1]
    return np.array(ident(dtype)).astype(dtype)


def _select_and_gather_add(ctx, tangents, operand, *, select_prim, **params):
    """A variadic reduce_window over (operand, tangent) pairs keeping the tangent of the
    selected operand (JAX's lowering outside GPU)."""
    aval = ctx.avals_in[1]
    direction = "GE" if select_prim.name == "ge" else "LE"
    inits = [constant(_select_identity(select_prim, aval.dtype), aval.dtype),
             constant(np.zeros((), aval.dtype), aval.dtype)]
    scalar = aval.update(shape=())

    def body(kx, vx, ky, vy):
        pick = compare(kx, ky, direction, aval.dtype)
        return [hlo.select(pick, kx, ky), hlo.select(pick, vx, vy)]
    out_aval = ctx.aval_out
    return reduce_window([out_aval, out_aval], [operand, tangents], inits, [scalar, scalar],
                         body, **params)[1]


register_lowering(P["select_and_gather_add"], _select_and_gather_add)


def _select_and_scatter_add(ctx, source, operand, *, select_prim, window_dimensions,
                            window_strides, padding, expand_padding=True):
    """``stablehlo.select_and_scatter`` with the padding made explicit (as JAX does on CPU
    and GPU: padded positions hold the selection's identity, so they are never chosen); on
    TPU (``expand_padding=False``) the op's own padding, as JAX's default rule."""
    source_aval, operand_aval = ctx.avals_in
    dtype = operand_aval.dtype
    scalar = tensor_type((), dtype)
    if not expand_padding:
        padded_shape = list(operand_aval.shape)
        op = hlo.SelectAndScatterOp(
            tensor_type(padded_shape, dtype), operand, source,
            constant(np.zeros((), dtype), dtype), window_dimensions=i64_array(window_dimensions),
            window_strides=i64_array(window_strides), padding=_padding_attr(padding))
        padding = [(0, 0)] * len(padding)  # (nothing to slice off below)
    elif any(lo or hi for lo, hi in padding):
        ident = constant(_select_identity(select_prim, dtype), dtype)
        lows = [lo for lo, _ in padding]
        highs = [hi for _, hi in padding]
        padded_shape = [d + lo + hi for d, (lo, hi) in zip(operand_aval.shape, padding)]
        operand = hlo.pad(operand, ident, lows, highs, [0] * len(padding))
    else:
        padded_shape = list(operand_aval.shape)
    if expand_padding:
        op = hlo.SelectAndScatterOp(
            tensor_type(padded_shape, dtype), operand, source,
            constant(np.zeros((), dtype), dtype), window_dimensions=i64_array(window_dimensions),
            window_strides=i64_array(window_strides),
            padding=_padding_attr([(0, 0)] * len(padding)))
    direction = "GE" if select_prim.name == "ge" else "LE"
    select = op.select.blocks.append(scalar, scalar)
    with ir.InsertionPoint(select):
        hlo.return_([compare(*select.arguments, direction, dtype)])
    scatter = op.scatter.blocks.append(scalar, scalar)
    with ir.InsertionPoint(scatter):
        a, b = scatter.arguments
        hlo.return_([hlo.or_(a, b) if dtype == np.bool_ else hlo.add(a, b)])
    out = op.result
    if any(lo or hi for lo, hi in padding):
        starts = [lo for lo, _ in padding]
        limits = [lo + d for (lo, _), d in zip(padding, operand_aval.shape)]
        out = hlo.slice(out, starts, limits, [1] * len(padding))
    return out


register_lowering(P["select_and_scatter_add"], _select_and_scatter_add)
register_lowering(P["select_and_scatter_add"],
                  functools.partial(_select_and_scatter_add, expand_padding=False),
                  platform="tpu")


def _select_and_scatter(ctx, operand, source, init_value, *, select_jaxpr, select_consts,
                        scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                        padding):
    """``stablehlo.select_and_scatter`` with the traced select and scatter functions as its
    regions (JAX's rule: the op's own padding)."""
    operand_aval = ctx.avals_in[0]
    scalar = tensor_type((), operand_aval.dtype)
    op = hlo.SelectAndScatterOp(
        aval_type(ctx.aval_out), operand, source, init_value,
        window_dimensions=i64_array(window_dimensions), window_strides=i64_array(window_strides),
        padding=_padding_attr(padding))
    for region, jaxpr, consts in ((op.select, select_jaxpr, select_consts),
                                  (op.scatter, scatter_jaxpr, scatter_consts)):
        block = region.blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            const_vals = [const_value(v.aval, c) for v, c in zip(jaxpr.constvars, consts)]
            hlo.return_(emit_jaxpr(ctx.module, jaxpr, const_vals, list(block.arguments)))
    return op.result


register_lowering(P["select_and_scatter"], _select_and_scatter)
