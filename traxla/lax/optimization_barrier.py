"""``optimization_barrier``: a pytree passed through unchanged, with a fence XLA does not
move computation across."""
from __future__ import annotations

from traxla import tree_util
from traxla.ir.rules.optimization import optimization_barrier_p


def optimization_barrier(operand, /):
    """The pytree ``operand`` unchanged; XLA may not move computation across the barrier."""
    flat, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*flat))
