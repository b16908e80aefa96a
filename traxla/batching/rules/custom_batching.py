"""Batching ``custom_vmap_call``: the user's rule runs on the operands with their batch
dimension in front, and says which outputs are batched (JAX's ``custom_vmap_batching``)."""
from __future__ import annotations

from traxla import tree_util
from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules_support import call_rule, check_vmap_rule_trees
from traxla.ir.rules.custom_batching import custom_vmap_p


def _custom_vmap(size, vals, dims, *, call, rule, in_tree, out_tree):
    args_flat = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    args = tree_util.tree_unflatten(in_tree, args_flat)
    in_batched = tree_util.tree_unflatten(in_tree, [d is not None for d in dims])
    out, out_batched = call_rule(rule, size, in_batched, args)
    flat_outs, tree1 = tree_util.tree_flatten(out)
    flat_out_batched, tree2 = tree_util.tree_flatten(out_batched)
    check_vmap_rule_trees(rule, out_tree, tree1, tree2)
    return flat_outs, [0 if b else None for b in flat_out_batched]


register_batching(custom_vmap_p, _custom_vmap)
