"""optree (jax extra) quick start: tree_map over JAX arrays, tree_ravel from its JAX integration."""
import jax.numpy as jnp
import optree
from optree.integrations.jax import tree_ravel
from _out import emit

tree = {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2)), 2.0), "c": None}
doubled = optree.tree_map(lambda x: x * 2, tree)
flat, unravel = tree_ravel(tree)
back = unravel(flat + 1)
emit({"doubled": optree.tree_leaves(doubled), "flat": flat,
      "back": optree.tree_leaves(back), "n": optree.tree_structure(tree).num_leaves})
