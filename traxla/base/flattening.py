"""Flattening: a pytree into its leaves and ``PyTreeDef`` (``tree_flatten``,
``tree_leaves``, the ``treedef_*`` helpers), one level at a time, and with key paths
(``tree_flatten_with_path``)."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from traxla.base import pytree_registry as _registry, treedef as _treedefs
from traxla.base.key_paths import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey
from traxla.base.pytree_registry import (_CUSTOM, _DICT, _LEAF, _LIST, _NAMEDTUPLE, _NONE,
                                         _TUPLE, _check_is_leaf_result, _classify, _custom,
                                         _kind_of, _sorted_keys)
from traxla.base.treedef import (_LEAF_NODE, _LEAF_TREEDEF, _NONE_NODE, PyTreeDef, _flat_def,
                                 _flat_node, _mk)

# The dispatch table and the interned flat nodes and treedefs are bound by assignment, not
# imported by name: CPython 3.11 compiles ``name.get(...)`` on a name that the module
# imports as an attribute load and a call (no LOAD_METHOD), slower in the loops below.
_kinds = _registry._kinds
_FLAT_NODES = _treedefs._FLAT_NODES
_FLAT_DEFS = _treedefs._FLAT_DEFS


# NB: the kind constants are written as literals in the two hot functions
# below (0 = _LEAF, 1 = _NONE, 2 = _TUPLE, 3 = _LIST, 4 = _DICT,
# 5 = _NAMEDTUPLE, 6 = _CUSTOM) and module globals are bound as default
# arguments: both avoid global-dict lookups on the dispatch hot path.
def _flat(x, leaves: list, _kinds=_kinds, _LEAF_NODE=_LEAF_NODE,
          _FLAT_NODES=_FLAT_NODES):
    """Flatten ``x`` (no is_leaf), appending leaves; return its node."""
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _classify(t)
    if k == 0:
        leaves.append(x)
        return _LEAF_NODE
    if k == 2 or k == 3:
        for c in x:
            if _kinds.get(type(c)) != 0:
                break
        else:  # all children are leaves: interned flat node
            leaves.extend(x)
            node = _FLAT_NODES.get((k, len(x)))
            return node if node is not None else _flat_node(k, len(x))
        children = x
        data = None
    elif k == 4:
        try:
            data = tuple(sorted(x))
        except Exception as e:
            raise ValueError("Comparator raised exception while sorting pytree "
                             "dictionary keys.") from e
        sub = []
        for key in data:
            c = x[key]
            if _kinds.get(type(c)) == 0:
                leaves.append(c)
                sub.append(_LEAF_NODE)
            else:
                sub.append(_flat(c, leaves))
        return (4, data, tuple(sub))
    elif k == 1:
        return _NONE_NODE
    elif k == 5:
        children = x
        data = t
    else:
        entry = _custom[t]
        children, aux = entry.flatten(x)
        data = (entry, aux)
    sub = []
    append = sub.append
    for c in children:
        if _kinds.get(type(c)) == 0:
            leaves.append(c)
            append(_LEAF_NODE)
        else:
            append(_flat(c, leaves))
    return (k, data, tuple(sub))


def _flat_is_leaf(x, leaves: list, is_leaf):
    """Flatten ``x`` honouring ``is_leaf`` (called on every subtree)."""
    if _check_is_leaf_result(is_leaf(x), x):
        leaves.append(x)
        return _LEAF_NODE
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _classify(t)
    if k == _LEAF:
        leaves.append(x)
        return _LEAF_NODE
    if k == _TUPLE or k == _LIST:
        children = x
        data = None
    elif k == _DICT:
        data = tuple(_sorted_keys(x))
        children = [x[key] for key in data]
    elif k == _NONE:
        return _NONE_NODE
    elif k == _NAMEDTUPLE:
        children = x
        data = t
    else:
        entry = _custom[t]
        children, aux = entry.flatten(x)
        data = (entry, aux)
    return (k, data, tuple([_flat_is_leaf(c, leaves, is_leaf) for c in children]))


def _collect(x, leaves: list, _kinds=_kinds) -> None:
    """Like ``_flat`` but only collects leaves (no structure)."""
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _classify(t)
    if k == 0:
        leaves.append(x)
        return
    if k == 2 or k == 3 or k == 5:
        children = x
    elif k == 4:
        try:
            keys = sorted(x)
        except Exception as e:
            raise ValueError("Comparator raised exception while sorting pytree "
                             "dictionary keys.") from e
        for key in keys:
            c = x[key]
            if _kinds.get(type(c)) == 0:
                leaves.append(c)
            else:
                _collect(c, leaves)
        return
    elif k == 1:
        return
    else:
        children = _custom[t].flatten(x)[0]
    for c in children:
        if _kinds.get(type(c)) == 0:
            leaves.append(c)
        else:
            _collect(c, leaves)


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list, PyTreeDef]:
    """Flatten a pytree into ``(leaves, treedef)``."""
    if is_leaf is None:
        t = type(tree)
        if t is tuple or t is list:
            # Fast path: a flat sequence of leaves -> cached treedef.
            kinds = _kinds
            for c in tree:
                if kinds.get(type(c)) != 0:
                    break
            else:
                td = _FLAT_DEFS.get((t, len(tree)))
                return list(tree), td if td is not None else _flat_def(t, len(tree))
        leaves: list = []
        node = _flat(tree, leaves)
        if node is _LEAF_NODE:
            return leaves, _LEAF_TREEDEF
    else:
        leaves = []
        node = _flat_is_leaf(tree, leaves, is_leaf)
    return leaves, _mk(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree from a treedef and an iterable of leaves."""
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``tree`` in flattening order."""
    if is_leaf is None:
        t = type(tree)
        if t is tuple or t is list:
            kinds = _kinds
            for c in tree:
                if kinds.get(type(c)) != 0:
                    break
            else:
                return list(tree)
        leaves: list = []
        _collect(tree, leaves)
        return leaves
    leaves = []
    _flat_is_leaf(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                   ) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True if the treedef has a single node (a leaf, or ``None``)."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    return treedef.num_nodes == 1 and treedef.num_leaves == 1


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """A tuple treedef whose children are ``treedefs``."""
    treedefs = list(treedefs)
    return _mk((_TUPLE, None, tuple(td._node for td in treedefs)),
               sum(td._num_leaves for td in treedefs))


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every element of ``iterable`` is a pytree leaf."""
    if is_leaf is None:
        kinds = _kinds
        for x in iterable:
            k = kinds.get(type(x))
            if k is None:
                k = _classify(type(x))
            if k != _LEAF:
                return False
        return True
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(
        a is b for a, b in zip(items, leaves))


# -- one level, and with key paths -----------------------------------------

def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Any]:
    """``(children, metadata)`` of a pytree node; ValueError for a leaf."""
    t = type(tree)
    k = _kind_of(tree)
    if k == _TUPLE or k == _LIST:
        return tree, None
    if k == _DICT:
        keys = tuple(_sorted_keys(tree))
        return tuple(tree[key] for key in keys), keys
    if k == _NONE:
        return (), None
    if k == _NAMEDTUPLE:
        return list(tree), t
    if k == _CUSTOM:
        children, aux = _custom[t].flatten(tree)
        return children, aux
    raise ValueError(f"can't tree-flatten type: {t}")


def _keyed_children(x, t, k) -> tuple[list, Any]:
    """``([(key, child), ...], data)`` for a node ``x`` of kind ``k``."""
    if k == _TUPLE or k == _LIST:
        return [(SequenceKey(i), c) for i, c in enumerate(x)], None
    if k == _DICT:
        keys = tuple(_sorted_keys(x))
        return [(DictKey(key), x[key]) for key in keys], keys
    if k == _NONE:
        return [], None
    if k == _NAMEDTUPLE:
        return [(GetAttrKey(f), c) for f, c in zip(t._fields, x)], t
    entry = _custom[t]
    if entry.flatten_with_keys is not None:
        kc, aux = entry.flatten_with_keys(x)
        return list(kc), (entry, aux)
    children, aux = entry.flatten(x)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], (entry, aux)


def flatten_one_level_with_keys(tree: Any) -> tuple[list, Any]:
    t = type(tree)
    k = _kind_of(tree)
    if k == _LEAF:
        raise ValueError(f"can't tree-flatten type: {t}")
    kc, data = _keyed_children(tree, t, k)
    if k == _CUSTOM:
        data = data[1]
    return kc, data


def _flat_path(x, path: tuple, out: list, is_leaf):
    if is_leaf is not None and _check_is_leaf_result(is_leaf(path, x), x):
        out.append((path, x))
        return _LEAF_NODE
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _classify(t)
    if k == _LEAF:
        out.append((path, x))
        return _LEAF_NODE
    if k == _NONE:
        return _NONE_NODE
    kc, data = _keyed_children(x, t, k)
    return (k, data, tuple([_flat_path(c, path + (key,), out, is_leaf)
                            for key, c in kc]))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """Like :func:`tree_flatten` but each leaf is paired with its key path."""
    if is_leaf is not None and not is_leaf_takes_path:
        f = is_leaf
        is_leaf = lambda _, x: f(x)  # noqa: E731
    out: list = []
    node = _flat_path(tree, (), out, is_leaf)
    return out, _mk(node, len(out))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False
                          ) -> list[tuple[tuple, Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def _child_keys(tree) -> tuple:
    return tuple(key for key, _ in flatten_one_level_with_keys(tree)[0])
