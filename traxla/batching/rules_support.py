"""What ``custom_vmap`` and its batching rule share: calling the user's rule and
checking the pytrees it returns (JAX's messages)."""
from __future__ import annotations


def call_rule(rule, axis_size, in_batched, args):
    return rule(axis_size, in_batched if type(in_batched) is list else list(in_batched), *args)


def check_vmap_rule_trees(rule, original_out_tree, out_tree, out_batched_tree):
    name = getattr(rule, "__name__", "<unnamed rule>")
    if out_tree != out_batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by custom "
            f"vmap rule ({name}) do not match.\nOutput values: {out_tree}\n"
            f"Batching spec: {out_batched_tree}")
    if out_tree != original_out_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({name}) does not match that "
            f"of original custom-vmapped function.\nOriginal output: {original_out_tree}\n"
            f"Rule output: {out_tree}")
