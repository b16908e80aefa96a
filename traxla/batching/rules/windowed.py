"""Batching of the windowed reductions and the generic ``reduce`` (JAX's rules): the batch
dimension becomes one more window dimension of size 1 (kept in place for the monoid window
reductions, moved to the front for the others)."""
from __future__ import annotations

from traxla.ir.rules.windowed import P as W
from traxla.lax import windowed as lw
from traxla.batching.batch_trace import bdim_at_front, register_batching


def _monoid_window(fn):
    def rule(size, vals, dims, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        operand, = vals
        bdim, = dims

        def ins(t, v):
            return t[:bdim] + (v,) + t[bdim:]
        out = fn(operand, ins(window_dimensions, 1), ins(window_strides, 1),
                 ins(padding, (0, 0)), ins(base_dilation, 1), ins(window_dilation, 1))
        return out, bdim
    return rule


register_batching(W["reduce_window_sum"], _monoid_window(lw._reduce_window_sum))
register_batching(W["reduce_window_max"], _monoid_window(lw._reduce_window_max))
register_batching(W["reduce_window_min"], _monoid_window(lw._reduce_window_min))


def _front(params):
    return dict(window_dimensions=(1,) + params["window_dimensions"],
                window_strides=(1,) + params["window_strides"],
                padding=((0, 0),) + params["padding"],
                base_dilation=(1,) + params.get("base_dilation", ()),
                window_dilation=(1,) + params.get("window_dilation", ()))


def _operands_at_front(size, vals, dims, error):
    """A variadic reduction's operands (the first half of ``vals``) with their batch dims at
    the front, and its initial values (the second half), which must be unbatched."""
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError(error)
    return [bdim_at_front(x, d, size) for x, d in zip(vals[:n], dims[:n])], vals[n:]


def _reduce_window_batch(size, vals, dims, *, jaxpr, consts, **params):
    operands, inits = _operands_at_front(
        size, vals, dims, "reduce_window batching is not implemented for initial values")
    outs = W["reduce_window"].bind(*operands, *inits, jaxpr=jaxpr, consts=consts,
                                   **_front(params))
    return outs, [0] * len(operands)


register_batching(W["reduce_window"], _reduce_window_batch)


def _select_and_scatter_add_batch(size, vals, dims, *, select_prim, window_dimensions,
                                  window_strides, padding):
    source, operand = (bdim_at_front(x, d, size) for x, d in zip(vals, dims))
    return lw._select_and_scatter_add(source, operand, select_prim,
                                      (1,) + window_dimensions, (1,) + window_strides,
                                      ((0, 0),) + padding), 0


def _select_and_gather_add_batch(size, vals, dims, *, select_prim, **params):
    t, x = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
    p = _front(params)
    return lw._select_and_gather_add(t, x, select_prim, p["window_dimensions"],
                                     p["window_strides"], p["padding"], p["base_dilation"],
                                     p["window_dilation"]), 0


register_batching(W["select_and_scatter_add"], _select_and_scatter_add_batch)
register_batching(W["select_and_gather_add"], _select_and_gather_add_batch)


def _reduce_batch(size, vals, dims, *, computation, jaxpr, dimensions):
    operands, inits = _operands_at_front(
        size, vals, dims, "lax.reduce batching is not implemented for batched initial values")
    outs = W["reduce"].bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                            dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * len(operands)


register_batching(W["reduce"], _reduce_batch)


def _select_and_scatter(size, vals, dims, *, select_jaxpr, select_consts, scatter_jaxpr,
                        scatter_consts, window_dimensions, window_strides, padding):
    """The batch axis in front of operand and source, as a window dimension of size 1 (JAX
    has no rule; this one is exact). A batched init value has no such reading: refused."""
    operand, source, init_value = vals
    if dims[2] is not None:
        raise NotImplementedError("Batching rule for 'select_and_scatter' not implemented "
                                  "for a batched init_value.")
    operand = bdim_at_front(operand, dims[0], size)
    source = bdim_at_front(source, dims[1], size)
    out = W["select_and_scatter"].bind(
        operand, source, init_value, select_jaxpr=select_jaxpr, select_consts=select_consts,
        scatter_jaxpr=scatter_jaxpr, scatter_consts=scatter_consts,
        window_dimensions=(1, *window_dimensions), window_strides=(1, *window_strides),
        padding=((0, 0), *padding))
    return out, 0


register_batching(W["select_and_scatter"], _select_and_scatter)
