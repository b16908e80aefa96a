"""``jax.tree_util.default_registry``: JAX's pytree registry as an object (jaxlib's
``PyTreeRegistry``), over traxla's one registry: its methods flatten with, and register
into, the same table as ``tree_flatten`` and ``register_pytree_node``."""
from __future__ import annotations

from traxla.base import flattening, pytree_registry


class PyTreeRegistry:
    """The registry of pytree node types (traxla has one: ``default_registry``)."""

    def flatten(self, tree, leaf_predicate=None):
        return flattening.tree_flatten(tree, leaf_predicate)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return flattening.tree_flatten_with_path(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, node_data)``, or None for a leaf (as jaxlib's)."""
        if not pytree_registry.is_tree_node(type(tree)):
            return None
        children, data = flattening.flatten_one_level(tree)
        return tuple(children), data

    def flatten_one_level_with_keys(self, tree):
        if not pytree_registry.is_tree_node(type(tree)):
            return None
        children, data = flattening.flatten_one_level_with_keys(tree)
        return tuple(children), data

    def is_node(self, typ) -> bool:
        return pytree_registry.is_tree_node(typ)

    def register_node(self, type, to_iterable, from_iterable, to_iterable_with_keys=None):  # noqa: A002
        pytree_registry.register_pytree_node(type, to_iterable, from_iterable,
                                             to_iterable_with_keys)

    def register_dataclass_node(self, type, data_fields, meta_fields):  # noqa: A002
        pytree_registry.register_dataclass(type, list(data_fields), list(meta_fields))

    def __repr__(self):
        return "<traxla.tree_util.default_registry>"


default_registry = PyTreeRegistry()
