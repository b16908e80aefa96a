"""Differentiating ``custom_vmap_call`` (JAX's ``custom_vmap_jvp``): the JVP is again a
``custom_vmap_call``, of the call's JVP, whose rule is the JVP of the user's rule, vmapped
over whatever the primals and tangents do not share as batched. No transpose: as in JAX,
reverse mode needs a ``custom_vjp`` around the ``custom_vmap``."""
from __future__ import annotations

import operator

from traxla import tree_util
from traxla.autodiff.ad import instantiate, jvp, jvp_rules, transpose_rules
from traxla.autodiff.rules.control_flow import _jvp_jaxpr
from traxla.batching.batch_trace import moveaxis, vmap_unrestricted
from traxla.batching.rules_support import call_rule, check_vmap_rule_trees
from traxla.ir.rules.custom_batching import custom_vmap_p


def custom_vmap_jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    def jvp_of_rule_rule(axis_size, in_batched, primals, tangents):
        in_batched_ps, in_batched_ts = in_batched
        mutually_batched = tree_util.tree_map(operator.and_, in_batched_ps, in_batched_ts)
        extra_batched_ps = tree_util.tree_map(lambda pb, tb: 0 if pb and not tb else None,
                                              in_batched_ps, in_batched_ts)
        extra_batched_ts = tree_util.tree_map(lambda pb, tb: 0 if tb and not pb else None,
                                              in_batched_ps, in_batched_ts)
        flat_ps_ts, tree_ps_ts = tree_util.tree_flatten((primals, tangents))
        flat_extra, _ = tree_util.tree_flatten((extra_batched_ps, extra_batched_ts),
                                               is_leaf=lambda x: x is None)
        store = {}

        def to_jvp(*primals):
            out, out_batched = call_rule(rule, axis_size, mutually_batched, primals)
            check_vmap_rule_trees(rule, out_tree, tree_util.tree_structure(out),
                                  tree_util.tree_structure(out_batched))
            store["mutually_batched"] = out_batched
            return out

        def flat_jvp(*flat):
            ps, ts = tree_util.tree_unflatten(tree_ps_ts, list(flat))
            outs, store["tree"] = tree_util.tree_flatten(jvp(to_jvp, ps, ts))
            return outs

        flat_out, flat_axes = vmap_unrestricted(flat_jvp, flat_ps_ts, flat_extra, axis_size)
        flat_out = [o if d is None else moveaxis(o, d, 0) for o, d in zip(flat_out, flat_axes)]
        n = len(flat_out) // 2
        out_ps, out_ts = tree_util.tree_unflatten(store["tree"], flat_out)
        extra_ps, extra_ts = tree_util.tree_unflatten(
            store["tree"], [d is not None for d in flat_axes[:n]] +
            [d is not None for d in flat_axes[n:]])
        both = store["mutually_batched"]
        return ((out_ps, out_ts), (tree_util.tree_map(operator.or_, both, extra_ps),
                                   tree_util.tree_map(operator.or_, both, extra_ts)))

    tangents = [instantiate(t) for t in tangents]
    n_out = len(call.out_avals)
    jvp_call, _ = _jvp_jaxpr(call, [True] * len(primals), [True] * n_out)
    outs = custom_vmap_p.bind(
        *primals, *tangents, call=jvp_call, rule=jvp_of_rule_rule,
        in_tree=tree_util.treedef_tuple((in_tree, in_tree)),
        out_tree=tree_util.treedef_tuple((out_tree, out_tree)))
    return outs[:n_out], outs[n_out:]




def _no_transpose(cts, *args, **params):
    raise ValueError(
        "Linearization failed to produce known values for all output primals. This is "
        "typically caused by attempting to differentiate a function uses an operation that "
        "does not support reverse-mode autodiff. (A custom_vmap function has no reverse-mode "
        "rule: wrap it in a custom_vjp, as jax.custom_batching.custom_vmap's documentation "
        "shows.)")


jvp_rules[custom_vmap_p] = custom_vmap_jvp
transpose_rules[custom_vmap_p] = _no_transpose
