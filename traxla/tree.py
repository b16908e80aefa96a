"""``traxla.tree``: the short names of ``tree_util`` (``traxla.tree.map`` is
``tree_util.tree_map``), as ``jax.tree``."""
from __future__ import annotations

import dataclasses

from traxla.tree_util import (tree_all as all, tree_broadcast as broadcast,  # noqa: F401
                        tree_flatten as flatten, tree_flatten_with_path as flatten_with_path,
                        tree_leaves as leaves, tree_leaves_with_path as leaves_with_path,
                        tree_map as map, tree_map_with_path as map_with_path,
                        tree_reduce as reduce, tree_reduce_associative as reduce_associative,
                        tree_structure as structure, tree_transpose as transpose,
                        tree_unflatten as unflatten)


def static(**kwargs):
    """A ``dataclasses.field`` marked static (``metadata={'static': True}``), for
    ``tree_util.register_dataclass``."""
    metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = ["all", "broadcast", "flatten", "flatten_with_path", "leaves", "leaves_with_path",
           "map", "map_with_path", "reduce", "reduce_associative", "static", "structure",
           "transpose", "unflatten"]
