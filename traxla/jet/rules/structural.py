"""Jet rules of the shape, indexing, reduction, contraction and call primitives: most are
linear (each term goes through the primitive on its own); contractions take the Cauchy
product; ``jit`` is expanded as a ``jit`` of the expanded jaxpr, as JAX's."""
from __future__ import annotations

from functools import partial

from traxla import lax
from traxla.ir.rules.call import jit_p
from traxla.ir.rules.collectives import reshard_p
from traxla.ir.rules.device_put import device_put_p
from traxla.jet import deflinear, jet2, jet_flat, jet_rules
from traxla.jet.rules.elementwise import bilinear_taylor_rule
from traxla.tracer import make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import eval_jaxpr

for _p in (lax.broadcast_in_dim_p, lax.concatenate_p, lax.split_p, lax.stack_p,
           lax.unstack_p, lax.pad_p, lax.reshape_p, lax.squeeze_p, lax.rev_p, lax.transpose_p,
           lax.slice_p, lax.reduce_sum_p, lax.reduce_window_sum_p, lax.fft_p, device_put_p,
           reshard_p, lax.cumsum_p):
    deflinear(_p)


def _dynamic_slice_jet_rule(primals_in, series_in, **params):
    operand, *start_indices = primals_in
    primal_out = lax.dynamic_slice_p.bind(operand, *start_indices, **params)
    series_out = [lax.dynamic_slice_p.bind(terms_in[0], *start_indices, **params)
                  for terms_in in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.dynamic_slice_p] = _dynamic_slice_jet_rule


def _dynamic_update_slice_jet_rule(primals_in, series_in, **params):
    operand, update, *start_indices = primals_in
    primal_out = lax.dynamic_update_slice_p.bind(operand, update, *start_indices, **params)
    series_out = [lax.dynamic_update_slice_p.bind(*terms_in[:2], *start_indices, **params)
                  for terms_in in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.dynamic_update_slice_p] = _dynamic_update_slice_jet_rule


def _cumulative_jet_rule(primals_in, series_in, *, axis: int, reverse: bool, combine_fn):
    # the parallel prefix scan, as JAX's (reduce_window is not arbitrarily differentiable)
    return jet2(partial(lax.associative_scan, combine_fn, axis=axis, reverse=reverse),
                primals_in, series_in)


jet_rules[lax.cumprod_p] = partial(_cumulative_jet_rule, combine_fn=lax.mul)
jet_rules[lax.cummax_p] = partial(_cumulative_jet_rule, combine_fn=lax.max)
jet_rules[lax.cummin_p] = partial(_cumulative_jet_rule, combine_fn=lax.min)

jet_rules[lax.dot_general_p] = partial(bilinear_taylor_rule, lax.dot_general_p)
jet_rules[lax.conv_general_dilated_p] = partial(bilinear_taylor_rule,
                                                lax.conv_general_dilated_p)


def _gather_taylor_rule(primals_in, series_in, **params):
    operand, start_indices = primals_in
    gs, _ = series_in
    primal_out = lax.gather_p.bind(operand, start_indices, **params)
    series_out = [lax.gather_p.bind(g, start_indices, **params) for g in gs]
    return primal_out, series_out


jet_rules[lax.gather_p] = _gather_taylor_rule


def _gen_reduce_choose_taylor_rule(prim):
    def chooser_taylor_rule(primals_in, series_in, **params):
        operand, = primals_in
        gs, = series_in
        primal_out = prim.bind(operand, **params)
        axes = params["axes"]
        shape = [1 if i in axes else d for i, d in enumerate(operand.shape)]
        location_indicators = lax.convert_element_type(
            lax.eq(operand, lax.reshape(primal_out, shape)), gs[0].dtype)
        counts = lax.reduce_sum(location_indicators, axes)
        series_out = [lax.div(lax.reduce_sum(lax.mul(g, location_indicators), axes), counts)
                      for g in gs]
        return primal_out, series_out
    return chooser_taylor_rule


jet_rules[lax.reduce_max_p] = _gen_reduce_choose_taylor_rule(lax.reduce_max_p)
jet_rules[lax.reduce_min_p] = _gen_reduce_choose_taylor_rule(lax.reduce_min_p)


def _scatter_add_rule(primals_in, series_in, **params):
    bind = partial(lax.scatter_add_p.bind, **params)
    operand, scatter_indices, updates = primals_in
    primal_out = bind(operand, scatter_indices, updates)
    series_out = [bind(d1, scatter_indices, d2) for d1, _, d2 in zip(*series_in)]
    return primal_out, series_out


jet_rules[lax.scatter_add_p] = _scatter_add_rule


def _jit_jet_rule(primals_in, series_in, *, jaxpr, name):
    """A ``jit`` of the expanded jaxpr: operands the primals then every series term, results
    likewise (JAX's ``_pjit_jet_rule``)."""
    order = len(series_in[0])
    n_in, n_out = len(primals_in), len(jaxpr.out_avals)
    terms_in = [t for terms in series_in for t in terms]

    def expanded(*args):
        series = [list(args[n_in + i * order:n_in + (i + 1) * order]) for i in range(n_in)]
        out_primals, out_terms, _ = jet_flat(lambda *a: eval_jaxpr(jaxpr, (), *a), order,
                                             list(args[:n_in]), series)
        return out_primals + [t for terms in out_terms for t in terms]

    avals = [lax.aval_of(x) for x in list(primals_in) + terms_in]
    new = trace_to_jaxpr(expanded, avals, make_debug_info(expanded, "jet", ()))
    outs = jit_p.bind(*primals_in, *terms_in, jaxpr=new, name=name)
    return outs[:n_out], [outs[n_out + i * order:n_out + (i + 1) * order] for i in range(n_out)]


jet_rules[jit_p] = _jit_jet_rule
