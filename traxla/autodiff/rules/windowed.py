"""JVP and transpose rules of the windowed reductions and the generic ``reduce`` (JAX's
lax/windowed_reductions.py and lax.py): a window sum is linear (its transpose is a window
sum of the strided-padded cotangent); a window max/min's tangent is the tangent at the
selected element (``select_and_gather_add``), whose transpose scatters back
(``select_and_scatter_add``) and vice versa."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir.rules.elementwise import P as E
from traxla.ir.rules.shape import pad_p
from traxla.ir.rules.windowed import P as W
from traxla.lax import windowed as lw
from traxla.tracer.interpret import eval_jaxpr
from traxla.autodiff.ad import Zero, instantiate, is_undefined, jvp_flat, jvp_rules, transpose_rules, zero_of
from traxla.autodiff.rules._util import defjvp, deflinear2
from traxla.ir.rules.conv import dilate_shape
from traxla.batching import vmap
from traxla.autodiff.rules.reduction import _reduce_jvp


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    input_shape = operand.aval.shape
    lo_hi = _vjp_lhs_padding_np(input_shape, window_dimensions, window_strides,
                                lax.shape_of(ct), padding, base_dilation, window_dilation)
    config = tuple((lo, hi, int(s) - 1) for (lo, hi), s in zip(lo_hi, window_strides))
    padded = pad_p.bind(ct, lax._zero(ct), padding_config=config)
    ones = (1,) * len(input_shape)
    out = lw._reduce_window_sum(padded, window_dimensions, base_dilation,
                                [(0, 0)] * len(input_shape), ones, window_dilation)
    assert lax.shape_of(out) == tuple(input_shape), (lax.shape_of(out), input_shape)
    return [out]


def _vjp_lhs_padding_np(in_shape, window_dimensions, window_strides, out_shape, padding,
                        lhs_dilation, rhs_dilation):
    """JAX's ``_conv_general_vjp_lhs_padding`` keeping its NumPy integers (they print in
    the ``pad`` equation's params)."""
    lhs_dilated = dilate_shape(in_shape, lhs_dilation)
    rhs_dilated = dilate_shape(window_dimensions, rhs_dilation)
    out_dilated = dilate_shape(out_shape, window_strides)
    before = np.subtract(rhs_dilated, [lo for lo, _ in padding]) - 1
    after = np.add(lhs_dilated, rhs_dilated) - 1 - out_dilated - before
    return list(zip(before, after))


deflinear2(W["reduce_window_sum"], _reduce_window_sum_transpose)


def _chooser_jvp(select_prim):
    def rule(g, operand, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
        return lw._select_and_gather_add(g, operand, select_prim, window_dimensions,
                                         window_strides, padding, base_dilation,
                                         window_dilation)
    return rule


defjvp(W["reduce_window_max"], _chooser_jvp(E["ge"]))
defjvp(W["reduce_window_min"], _chooser_jvp(E["le"]))


def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, window_dimensions, window_strides,
                       padding, base_dilation, window_dilation):
    n = len(primals) // 2
    operand, init_value = list(primals[:n]), list(primals[n:])
    operand_tangent, init_tangent = list(tangents[:n]), list(tangents[n:])
    if not all(type(t) is Zero for t in init_tangent):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    init_tangent = [instantiate(t) for t in init_tangent]
    operand_tangent = [instantiate(t) for t in operand_tangent]

    def wrapper(left, right):
        pl, tl = left[:n], left[n:]
        pr, tr = right[:n], right[n:]
        outs, touts = jvp_flat(lambda *xs: eval_jaxpr(jaxpr, list(consts), *xs),
                               [*pl, *pr], [*tl, *tr])
        return [*outs, *touts]

    out = lw.reduce_window([*operand, *operand_tangent], [*init_value, *init_tangent], wrapper,
                           window_dimensions, window_strides, padding, base_dilation,
                           window_dilation)
    return out[:n], out[n:]


jvp_rules[W["reduce_window"]] = _reduce_window_jvp


def _select_and_scatter_add_jvp(primals, tangents, *, select_prim, window_dimensions,
                                window_strides, padding):
    source, operand = primals
    g_source, _ = tangents
    out = lw._select_and_scatter_add(source, operand, select_prim, window_dimensions,
                                     window_strides, padding)
    if type(g_source) is Zero:
        return out, zero_of(out)
    return out, lw._select_and_scatter_add(g_source, operand, select_prim, window_dimensions,
                                           window_strides, padding)


def _select_and_scatter_add_transpose(t, source, operand, *, select_prim, window_dimensions,
                                      window_strides, padding):
    if is_undefined(operand):
        raise ValueError("select_and_scatter_add is not linear in its operand (the values "
                         "that choose the window positions).")
    if type(t) is Zero:
        return [Zero(source.aval), None]
    ones = (1,) * len(window_dimensions)
    return [lw._select_and_gather_add(t, operand, select_prim, window_dimensions,
                                      window_strides, padding, ones, ones), None]


jvp_rules[W["select_and_scatter_add"]] = _select_and_scatter_add_jvp
transpose_rules[W["select_and_scatter_add"]] = _select_and_scatter_add_transpose


def _select_and_gather_add_jvp(primals, tangents, *, select_prim, window_dimensions,
                               window_strides, padding, base_dilation, window_dilation):
    source, operand = primals
    g_source, _ = tangents
    args = (select_prim, window_dimensions, window_strides, padding, base_dilation,
            window_dilation)
    out = lw._select_and_gather_add(source, operand, *args)
    if type(g_source) is Zero:
        return out, zero_of(out)
    return out, lw._select_and_gather_add(g_source, operand, *args)


def _select_and_gather_add_transpose(t, tangents, operand, *, select_prim, window_dimensions,
                                     window_strides, padding, base_dilation, window_dilation):
    if is_undefined(operand):
        raise ValueError("select_and_gather_add is not linear in its operand (the values "
                         "that choose the window positions).")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with "
                                  f"window dilation, got window_dilation={window_dilation}.")
    if type(t) is Zero:
        return [Zero(tangents.aval), None]
    has_base_dilation = any(d != 1 for d in base_dilation)
    if has_base_dilation:
        ident = (lw.get_max_identity if select_prim is E["ge"] else lw.get_min_identity)(
            lax.dtype_of(operand))
        operand = lax.pad(operand, ident, tuple((0, 0, d - 1) for d in base_dilation))
    result = lw._select_and_scatter_add(t, operand, select_prim, window_dimensions,
                                        window_strides, padding)
    if has_base_dilation:
        shape = lax.shape_of(result)
        result = lax.slice(result, (0,) * len(shape), shape, base_dilation)
    return [result, None]


jvp_rules[W["select_and_gather_add"]] = _select_and_gather_add_jvp
transpose_rules[W["select_and_gather_add"]] = _select_and_gather_add_transpose


def _reduce_jvp_rule(primals, tangents, *, computation, jaxpr, dimensions):
    n = len(primals) // 2
    primal_xs, init_values = list(primals[:n]), list(primals[n:])
    tangent_xs, tangent_init = list(tangents[:n]), list(tangents[n:])
    if any(type(t) is not Zero for t in tangent_init):
        raise NotImplementedError("Gradient of general lax.reduce with non-zero tangents for "
                                  "initial values to reduction not implemented")
    ndim = len(lax.shape_of(primal_xs[0]))
    reducer = lambda *xs: list(eval_jaxpr(jaxpr, (), *xs))  # noqa: E731
    for _ in range(ndim - len(dimensions) + 1):
        reducer = vmap(reducer)
    outs, touts = _reduce_jvp(reducer, init_values, primal_xs,
                              [instantiate(t) for t in tangent_xs], tuple(dimensions))
    return list(outs), list(touts)


jvp_rules[W["reduce"]] = _reduce_jvp_rule
