"""``traxla.tree_util``: the public namespace of traxla's pytrees, as ``jax.tree_util``.

The implementation is the base layer, ``traxla/base/``, which imports nothing but the
standard library (it sits on the ``jit`` dispatch hot path and under every
transformation): the registry of node types (``pytree_registry``), treedefs
(``treedef``), flattening (``flattening``), key paths (``key_paths``), the functions over
whole trees (``tree_functions``) and ``Partial`` (``partial``).
"""
from __future__ import annotations

from traxla.base.flattening import (all_leaves, flatten_one_level, flatten_one_level_with_keys,
                                    tree_flatten, tree_flatten_with_path, tree_leaves,
                                    tree_leaves_with_path, tree_structure, tree_unflatten,
                                    treedef_children, treedef_is_leaf, treedef_is_strict_leaf,
                                    treedef_tuple)
from traxla.base.key_paths import (DictKey, FlattenedIndexKey, GetAttrKey,  # noqa: F401
                                   KeyEntry, KeyLeafPair, KeyLeafPairs, KeyPath, SequenceKey,
                                   keystr)
from traxla.base.partial import Partial  # noqa: F401
from traxla.base.pytree_registry import (is_tree_node, register_dataclass, register_pytree_node,
                                         register_pytree_node_class, register_pytree_with_keys,
                                         register_pytree_with_keys_class, register_static)
from traxla.base.tree_functions import (broadcast_prefix, tree_all, tree_broadcast,  # noqa: F401
                                        tree_map, tree_map_with_path, tree_reduce,
                                        tree_reduce_associative, tree_transpose)
from traxla.base.treedef import PyTreeDef

# Private names other modules read: the node kinds (the jit hit path's tree signatures,
# ``traxla.api.call_signatures``) and the custom registrations (``traxla.export``).
from traxla.base.pytree_registry import (  # noqa: F401
    _CUSTOM, _DICT, _LEAF, _LIST, _NAMEDTUPLE, _NONE, _TUPLE, _custom)
from traxla.base.default_registry import default_registry  # noqa: E402

__all__ = [
    "PyTreeDef",
    "default_registry",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "all_leaves",
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_pytree_with_keys_class",
    "register_static",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_tuple",
]
