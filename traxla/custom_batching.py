"""``traxla.custom_batching`` (``jax.custom_batching``): ``custom_vmap`` and
``sequential_vmap``."""
from __future__ import annotations

from traxla import tree_util
from traxla.autodiff.custom_vmap import custom_vmap
from traxla.lax import map as _lax_map


def _tree_split(mask, tree):
    lhs = tree_util.tree_map(lambda m, x: x if m else None, mask, tree)
    rhs = tree_util.tree_map(lambda m, x: None if m else x, mask, tree)
    return lhs, rhs


def _tree_merge(mask, lhs, rhs):
    return tree_util.tree_map(lambda m, x_l, x_r: x_l if m else x_r, mask, lhs, rhs)


def sequential_vmap(f):
    """``f`` batched by ``vmap`` as a loop (``lax.map``) over the batched arguments: for
    functions that do not support a batch dimension themselves."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        del axis_size

        def to_map(mapped_args):
            return f(*_tree_merge(in_batched, mapped_args, bcast_args))

        mapped_args, bcast_args = _tree_split(in_batched, list(args))
        out = _lax_map(to_map, mapped_args)
        return out, tree_util.tree_map(lambda _: True, out)

    return f


__all__ = ["custom_vmap", "sequential_vmap"]
