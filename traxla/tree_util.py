"""Pure-Python pytree utilities mirroring ``jax.tree_util``.

This module deliberately imports nothing but the standard library (it must not
import ``jax`` nor any other ``traxla`` module): it sits on the ``jit`` dispatch
hot path and is also the foundation for every other traxla transformation.

Representation
--------------
A :class:`PyTreeDef` wraps an immutable *node*: a 3-tuple
``(kind, data, children)`` where ``children`` is a tuple of nodes and ``data``
is the per-kind static metadata:

=============  ======================================================
kind           data
=============  ======================================================
``_LEAF``      ``None``   (a single shared node object, ``_LEAF_NODE``)
``_NONE``      ``None``   (``None`` is a node with no children)
``_TUPLE``     ``None``
``_LIST``      ``None``
``_DICT``      tuple of the sorted keys
``_NAMEDTUPLE`` the namedtuple type
``_CUSTOM``    ``(registry_entry, aux_data)``
=============  ======================================================

Because nodes are plain tuples, structural equality is Python's (C-level)
tuple equality, and hashing is tuple hashing (computed lazily, then cached).

Dispatch is through ``_kinds``, a dict keyed by the *exact* type of a value.
Types not yet seen are classified once (leaf or namedtuple) and cached; a
registration overwrites the cached entry.  As in JAX, subclasses of
``tuple``/``list``/``dict`` (other than namedtuples) are leaves unless
registered.
"""

from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
from typing import Any, Callable, Iterable, TypeVar

__all__ = [
    "PyTreeDef",
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

# ---------------------------------------------------------------------------
# Node kinds and the type-dispatch table
# ---------------------------------------------------------------------------

_LEAF = 0
_NONE = 1
_TUPLE = 2
_LIST = 3
_DICT = 4
_NAMEDTUPLE = 5
_CUSTOM = 6

_LEAF_NODE = (_LEAF, None, ())
_NONE_NODE = (_NONE, None, ())

_NoneType = type(None)

# exact type -> kind.  Unknown types are classified by ``_classify``.
_kinds: dict[type, int] = {
    _NoneType: _NONE,
    tuple: _TUPLE,
    list: _LIST,
    dict: _DICT,
    # Common leaf types, pre-seeded so the first flatten need not classify.
    int: _LEAF,
    float: _LEAF,
    complex: _LEAF,
    bool: _LEAF,
    str: _LEAF,
    bytes: _LEAF,
    object: _LEAF,
}
# exact type -> _Entry, for registered (custom) node types.
_custom: dict[type, "_Entry"] = {}
_BUILTIN_NODE_TYPES = frozenset((_NoneType, tuple, list, dict))


def _classify(t: type) -> int:
    """Classify a type not yet in ``_kinds`` (leaf or namedtuple) and cache it."""
    k = _NAMEDTUPLE if (issubclass(t, tuple) and hasattr(t, "_fields")) else _LEAF
    _kinds[t] = k
    return k


def _kind_of(x) -> int:
    t = type(x)
    k = _kinds.get(t)
    if k is None:
        k = _classify(t)
    return k


class _Entry:
    """A custom-node registration."""

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys",
                 "is_dataclass", "data_fields")

    def __init__(self, nodetype, flatten, unflatten, flatten_with_keys=None,
                 is_dataclass=False, data_fields=()):
        self.type = nodetype
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.is_dataclass = is_dataclass
        self.data_fields = data_fields

    def __repr__(self):
        return f"<pytree registration for {self.type!r}>"


def _sorted_keys(d) -> list:
    try:
        return sorted(d)
    except Exception as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys."
        ) from e


def _check_is_leaf_result(r, x) -> bool:
    if r is True:
        return True
    if r is False:
        return False
    raise ValueError(
        f"is_leaf predicate returned a non-boolean value {r!r}; expected a boolean")


# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------

class SequenceKey:
    """Key-path entry for an element of a tuple or list: ``[idx]``."""

    __slots__ = ("_idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        if not isinstance(idx, int):
            raise TypeError(f"SequenceKey idx must be an int, got {idx!r}")
        object.__setattr__(self, "_idx", idx)

    @property
    def idx(self) -> int:
        return self._idx

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __str__(self):
        return f"[{self._idx!r}]"

    def __repr__(self):
        return f"SequenceKey(idx={self._idx!r})"

    def __eq__(self, other):
        if type(other) is not SequenceKey:
            return False
        return self._idx == other._idx

    def __hash__(self):
        return hash((SequenceKey, self._idx))

    def __reduce__(self):
        return (SequenceKey, (self._idx,))


class DictKey:
    """Key-path entry for a mapping value: ``[key]`` (key shown with repr)."""

    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key):
        object.__setattr__(self, "_key", key)

    @property
    def key(self):
        return self._key

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __str__(self):
        return f"[{self._key!r}]"

    def __repr__(self):
        return f"DictKey(key={self._key!r})"

    def __eq__(self, other):
        if type(other) is not DictKey:
            return False
        return self._key == other._key

    def __hash__(self):
        return hash((DictKey, self._key))

    def __reduce__(self):
        return (DictKey, (self._key,))


class GetAttrKey:
    """Key-path entry for an attribute: ``.name``."""

    __slots__ = ("_name",)
    __match_args__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey name must be a str, got {name!r}")
        object.__setattr__(self, "_name", name)

    @property
    def name(self) -> str:
        return self._name

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __str__(self):
        return f".{self._name}"

    def __repr__(self):
        return f"GetAttrKey(name={self._name!r})"

    def __eq__(self, other):
        if type(other) is not GetAttrKey:
            return False
        return self._name == other._name

    def __hash__(self):
        return hash((GetAttrKey, self._name))

    def __reduce__(self):
        return (GetAttrKey, (self._name,))


class FlattenedIndexKey:
    """Key-path entry for the i-th child of a node registered without keys."""

    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key: int):
        if not isinstance(key, int):
            raise TypeError(f"FlattenedIndexKey key must be an int, got {key!r}")
        object.__setattr__(self, "_key", key)

    @property
    def key(self) -> int:
        return self._key

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __str__(self):
        return f"[<flat index {self._key}>]"

    def __repr__(self):
        return f"FlattenedIndexKey(key={self._key!r})"

    def __eq__(self, other):
        if type(other) is not FlattenedIndexKey:
            return False
        return self._key == other._key

    def __hash__(self):
        return hash((FlattenedIndexKey, self._key))

    def __reduce__(self):
        return (FlattenedIndexKey, (self._key,))


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """Pretty-print a key path, e.g. ``"['layers'][0].w"``.

    With ``simple=True`` each entry is rendered as its bare value
    (``layers/0/w`` with ``separator='/'``).
    """
    return separator.join(map(_simple_entrystr if simple else str, keys))


def _simple_entrystr(key) -> str:
    t = type(key)
    if t is SequenceKey:
        return str(key._idx)
    if t is DictKey or t is FlattenedIndexKey:
        return str(key._key)
    if t is GetAttrKey:
        return str(key._name)
    return str(key)


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

_new_object = object.__new__


def _mk(node, num_leaves: int) -> "PyTreeDef":
    td = _new_object(PyTreeDef)
    td._node = node
    td._num_leaves = num_leaves
    td._num_nodes = -1
    td._hash = None
    td._builder = None
    return td


def _count(node) -> tuple[int, int]:
    """(num_leaves, num_nodes) of a node."""
    if node is _LEAF_NODE:
        return 1, 1
    leaves = 0
    nodes = 1
    for c in node[2]:
        if c is _LEAF_NODE:
            leaves += 1
            nodes += 1
        else:
            l, n = _count(c)
            leaves += l
            nodes += n
    return leaves, nodes


def _node_str(node) -> str:
    k, data, ch = node
    if k == _LEAF:
        return "*"
    if k == _NONE:
        return "None"
    if k == _TUPLE:
        if len(ch) == 1:
            return f"({_node_str(ch[0])},)"
        return "(" + ", ".join(map(_node_str, ch)) + ")"
    if k == _LIST:
        return "[" + ", ".join(map(_node_str, ch)) + "]"
    if k == _DICT:
        return "{" + ", ".join(
            f"{key!r}: {_node_str(c)}" for key, c in zip(data, ch)) + "}"
    kids = ", ".join(map(_node_str, ch))
    if k == _NAMEDTUPLE:
        return f"CustomNode(namedtuple[{data.__name__}], [{kids}])"
    entry, aux = data
    return f"CustomNode({entry.type.__name__}[{aux}], [{kids}])"


def _struct_hash(node) -> int:
    """Hash fallback for nodes whose custom aux data is unhashable."""
    k, data, ch = node
    if k == _CUSTOM:
        entry, aux = data
        try:
            h = hash(aux)
        except TypeError:
            h = 0
        data = (entry, h)
    return hash((k, data, tuple(_struct_hash(c) for c in ch)))


def _build(node, it, _LEAF_NODE=_LEAF_NODE):
    """Rebuild a (non-leaf) node from an iterator over leaves (interpreter)."""
    k, data, ch = node
    vals = []
    append = vals.append
    for c in ch:
        append(next(it) if c is _LEAF_NODE else _build(c, it))
    if k == 2:  # _TUPLE
        return tuple(vals)
    if k == 3:  # _LIST
        return vals
    if k == 4:  # _DICT
        return dict(zip(data, vals))
    if k == 1:  # _NONE
        return None
    if k == 5:  # _NAMEDTUPLE
        return data(*vals)
    entry, aux = data
    return entry.unflatten(aux, tuple(vals))


_MAX_COMPILED_NODES = 1000
_MAX_COMPILED_DEPTH = 40


def _compile_builder(node):
    """Compile ``node`` into a straight-line ``leaves -> tree`` function.

    E.g. ``{'layers': [*, *], 'w': *}`` becomes
    ``lambda l: {_c0: [l[0], l[1]], _c1: l[2]}``.  Falls back to the
    interpreter (``_build``) for very large or deep structures.
    """
    k, _, ch = node
    if (k == _TUPLE or k == _LIST) and all(c is _LEAF_NODE for c in ch):
        return tuple if k == _TUPLE else list
    consts: dict = {}
    counter = [0, 0]  # next leaf index, node count

    def const(v) -> str:
        name = f"_c{len(consts)}"
        consts[name] = v
        return name

    def gen(node, depth) -> str:
        counter[1] += 1
        if counter[1] > _MAX_COMPILED_NODES or depth > _MAX_COMPILED_DEPTH:
            raise _TooBig
        k, data, ch = node
        if k == _LEAF:
            i = counter[0]
            counter[0] += 1
            return f"l[{i}]"
        if k == _NONE:
            return "None"
        kids = [gen(c, depth + 1) for c in ch]
        if k == _TUPLE:
            return "(" + "".join(e + ", " for e in kids) + ")"
        if k == _LIST:
            return "[" + ", ".join(kids) + "]"
        if k == _DICT:
            return "{" + ", ".join(
                f"{const(key)}: {e}" for key, e in zip(data, kids)) + "}"
        if k == _NAMEDTUPLE:
            return f"{const(data)}({', '.join(kids)})"
        entry, aux = data
        return (f"{const(entry.unflatten)}({const(aux)}, ("
                + "".join(e + ", " for e in kids) + "))")

    try:
        src = f"lambda l: {gen(node, 0)}"
        return eval(compile(src, "<traxla.tree_util unflatten>", "eval"), consts)
    except (_TooBig, RecursionError, SyntaxError, MemoryError):
        return lambda leaves: _build(node, iter(leaves))


class _TooBig(Exception):
    pass


_NONE_PREFIX_HINT = (
    "\n\nIn previous releases of JAX, flatten-up-to used to consider None to be "
    "a tree-prefix of non-None values. To obtain the previous behavior, you can "
    "usually write:\n"
    "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
    "is_leaf=lambda x: x is None)")


def _flatten_up_to(node, x, out: list) -> None:
    k, data, ch = node
    if k == _LEAF:
        out.append(x)
        return
    t = type(x)
    if k == _TUPLE:
        if t is not tuple:
            raise ValueError(f"Expected tuple, got {x!r}.")
        if len(x) != len(ch):
            raise ValueError(
                f"Tuple arity mismatch: {len(x)} != {len(ch)}; tuple: {x!r}.")
        children = x
    elif k == _LIST:
        if t is not list:
            raise ValueError(f"Expected list, got {x!r}.")
        if len(x) != len(ch):
            raise ValueError(
                f"List arity mismatch: {len(x)} != {len(ch)}; list: {x!r}.")
        children = x
    elif k == _DICT:
        if t is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys = _sorted_keys(x)
        if len(keys) != len(data) or tuple(keys) != data:
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(data)!r}; "
                f"present keys: {keys!r}.")
        children = [x[key] for key in data]
    elif k == _NONE:
        if x is not None:
            raise ValueError(f"Expected None, got {x!r}.{_NONE_PREFIX_HINT}")
        return
    elif k == _NAMEDTUPLE:
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if t is not data:
            raise ValueError(
                f"Named tuple type mismatch: expected type: {data!r}, tuple: {x!r}.")
        if len(x) != len(ch):
            raise ValueError(
                f"Named tuple arity mismatch: {len(x)} != {len(ch)}; tuple: {x!r}.")
        children = x
    else:
        entry, aux = data
        what = "custom dataclass node" if entry.is_dataclass else "custom node"
        if t is not entry.type:
            raise ValueError(
                f"{what[0].upper()}{what[1:]} type mismatch: expected type: "
                f"{entry.type!r}, value: {x!r}.")
        children, x_aux = entry.flatten(x)
        children = list(children)
        if x_aux != aux:
            raise ValueError(
                f"Mismatch {what} data: {aux!r} != {x_aux!r}; value: {x!r}.")
        if len(children) != len(ch):
            raise ValueError(
                f"Custom type arity mismatch: {len(children)} != {len(ch)}; "
                f"value: {x!r}.")
    for c, sub in zip(ch, children):
        if c is _LEAF_NODE:
            out.append(sub)
        else:
            _flatten_up_to(c, sub, out)


class PyTreeDef:
    """The structure of a pytree (everything but its leaves).

    Hashable and comparable by value; ``str``/``repr`` match JAX's exactly.
    Instances are created by :func:`tree_flatten` / :func:`tree_structure`.
    """

    # _builder: None (never unflattened), False (unflattened once) or a
    # compiled ``leaves -> tree`` function (see ``_compile_builder``).
    __slots__ = ("_node", "_num_leaves", "_num_nodes", "_hash", "_builder",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("PyTreeDef objects are created by tree_flatten / "
                        "tree_structure, not constructed directly")

    # -- basic properties -------------------------------------------------
    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        n = self._num_nodes
        if n < 0:
            n = self._num_nodes = _count(self._node)[1]
        return n

    def children(self) -> list["PyTreeDef"]:
        out = []
        for c in self._node[2]:
            out.append(_mk(c, 1 if c is _LEAF_NODE else _count(c)[0]))
        return out

    def node_data(self):
        """``(type, data)`` of the root node, or ``None`` for a leaf."""
        k, data, _ = self._node
        if k == _LEAF:
            return None
        if k == _NONE:
            return (_NoneType, None)
        if k == _TUPLE:
            return (tuple, None)
        if k == _LIST:
            return (list, None)
        if k == _DICT:
            return (dict, list(data))
        if k == _NAMEDTUPLE:
            return (data, None)
        entry, aux = data
        return (entry.type, aux)

    # -- (un)flattening ---------------------------------------------------
    def unflatten(self, leaves: Iterable[Any]) -> Any:
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        n = self._num_leaves
        if len(leaves) != n:
            if len(leaves) < n:
                raise ValueError(
                    f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
            raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
        b = self._builder
        if b:
            return b(leaves)
        node = self._node
        if node is _LEAF_NODE:
            return leaves[0]
        if b is None:
            # First use: interpret.  Treedefs that get reused (e.g. a jit
            # cache's output treedef) are compiled on their second use.
            self._builder = False
            return _build(node, iter(leaves))
        b = self._builder = _compile_builder(node)
        return b(leaves)

    def flatten_up_to(self, tree: Any) -> list:
        """Flatten ``tree`` down to this structure's leaves.

        Each leaf position of ``self`` may hold an arbitrary subtree of
        ``tree``; everything above must match exactly (else ``ValueError``).
        """
        out: list = []
        _flatten_up_to(self._node, tree, out)
        return out

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """The structure obtained by replacing every leaf of self with ``inner``."""
        inner_node = inner._node

        def sub(node):
            if node is _LEAF_NODE:
                return inner_node
            k, data, ch = node
            return (k, data, tuple(sub(c) for c in ch))

        return _mk(sub(self._node), self._num_leaves * inner._num_leaves)

    # -- value semantics --------------------------------------------------
    def __eq__(self, other):
        if type(other) is not PyTreeDef:
            return False
        if self is other:
            return True
        return (self._num_leaves == other._num_leaves
                and self._node == other._node)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._node)
            except TypeError:
                h = _struct_hash(self._node)
            self._hash = h
        return h

    def __repr__(self):
        return f"PyTreeDef({_node_str(self._node)})"

    __str__ = __repr__

    def __reduce__(self):
        return (_unpickle_treedef, (self._node, self._num_leaves))


def _intern(node):
    """Re-establish the shared leaf/None node objects (after unpickling)."""
    k, data, ch = node
    if k == _LEAF:
        return _LEAF_NODE
    if k == _NONE:
        return _NONE_NODE
    return (k, data, tuple(_intern(c) for c in ch))


def _unpickle_treedef(node, num_leaves):
    return _mk(_intern(node), num_leaves)


def _flat_def(t: type, n: int) -> PyTreeDef:
    """Cached treedef for a flat tuple/list of ``n`` leaves."""
    key = (t, n)
    td = _FLAT_DEFS.get(key)
    if td is None:
        td = _mk(_flat_node(_TUPLE if t is tuple else _LIST, n), n)
        if n <= 256:
            _FLAT_DEFS[key] = td
    return td


_FLAT_DEFS: dict[tuple[type, int], PyTreeDef] = {}
_LEAF_TREEDEF = _mk(_LEAF_NODE, 1)

# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------


def _flat_node(kind: int, n: int):
    """Interned node for a flat tuple/list of ``n`` leaves.

    Interning makes equality of the common flat structures an identity check.
    """
    node = _FLAT_NODES.get((kind, n))
    if node is None:
        node = (kind, None, (_LEAF_NODE,) * n)
        if n <= 256:
            _FLAT_NODES[(kind, n)] = node
    return node


_FLAT_NODES: dict = {}


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


def is_tree_node(typ: type) -> bool:
    """True if ``typ`` is a pytree node type (built-in, namedtuple or registered)."""
    k = _kinds.get(typ)
    if k is None:
        k = _classify(typ)
    return k != _LEAF


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``all(tree_leaves(tree))``."""
    return all(tree_leaves(tree, is_leaf))


class _Unspecified:
    pass


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _Unspecified(),
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    if isinstance(initializer, _Unspecified):
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(
            outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    it = iter(flat)
    lol = [[next(it) for _ in range(inner_size)] for _ in range(outer_size)]
    subtrees = [outer_treedef.unflatten(col) for col in zip(*lol)]
    return inner_treedef.unflatten(subtrees)


# ---------------------------------------------------------------------------
# One-level flattening, key paths
# ---------------------------------------------------------------------------

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


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf=None):
    """Port of JAX's ``_prefix_error``: yields ``name -> ValueError`` makers."""
    if treedef_is_strict_leaf(tree_structure(prefix_tree, is_leaf=is_leaf)):
        return

    if type(prefix_tree) != type(full_tree):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{keystr(key_path)}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full_tree)}.")
        return

    prefix_children, prefix_meta = flatten_one_level(prefix_tree)
    full_children, full_meta = flatten_one_level(full_tree)
    prefix_children = tuple(prefix_children)
    full_children = tuple(full_children)
    prefix_keys = _child_keys(prefix_tree)
    full_keys = _child_keys(full_tree)
    if isinstance(prefix_tree, (list, tuple)):
        if len(prefix_tree) != len(full_tree):
            ty = type(prefix_tree)
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty.__name__} at key path\n"
                f"    {name}{keystr(key_path)}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty.__name__} of length {len(prefix_tree)}, but the full pytree "
                f"has a subtree of the same type but of length {len(full_tree)}.")
            return
    else:
        try:
            # (JAX iterates a set here; we use a deterministic order.)
            pset, fset = set(prefix_keys), set(full_keys)
            diff = ([k for k in prefix_keys if k not in fset]
                    + [k for k in full_keys if k not in pset])
        except Exception:
            diff = None
        if len(prefix_children) != len(full_children):
            yield lambda name: ValueError(
                "pytree structure error: different numbers of pytree children at key path\n"
                f"    {name}{keystr(key_path)}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type\n"
                f"    {type(prefix_tree)}\n"
                f"with {len(prefix_children)} child keys\n"
                f"    {' '.join(str(k.key) for k in prefix_keys)}\n"
                f"but at the same key path the full pytree has a subtree of the same "
                f"type but with {len(full_children)} child keys\n"
                f"    {' '.join(str(k.key) for k in full_keys)}\n"
                + ("" if diff is None else
                   f"so the symmetric difference on key sets is\n"
                   f"    {' '.join(str(k.key) for k in diff)}"))
            return

    if prefix_meta != full_meta:
        prefix_meta_str = str(prefix_meta)
        full_meta_str = str(full_meta)
        metadata_diff = textwrap.indent(
            "\n".join(difflib.ndiff(prefix_meta_str.splitlines(),
                                    full_meta_str.splitlines())),
            prefix="    ")
        yield lambda name: ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{keystr(key_path)}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"with metadata\n"
            f"    {prefix_meta_str}\n"
            f"but at the same key path the full pytree has a subtree of the same "
            f"type but with metadata\n"
            f"    {full_meta_str}\n"
            f"so the diff in the metadata at these pytree nodes is\n"
            f"{metadata_diff}")
        return

    for k, t1, t2 in zip(prefix_keys, prefix_children, full_children):
        yield from _prefix_error((*key_path, k), t1, t2, is_leaf)


def _structure_str(tree) -> str:
    try:
        return str(tree_structure(tree))
    except Exception:  # pragma: no cover - e.g. unsortable dict keys
        return f"<unflattenable {type(tree).__name__}>"


def _mismatch_error(fn_name, treedef, tree, i, other, is_leaf, orig):
    try:
        err = next(_prefix_error((), tree, other, is_leaf), None)
    except Exception:
        err = None
    msg = str(err(f"{fn_name} tree")) if err is not None else str(orig)
    msg += (f"\n\n{fn_name}: every additional tree must have the first tree's "
            f"structure as a prefix, but\n"
            f"    {'first tree:':<{len(str(i)) + 18}}{treedef}\n"
            f"    additional tree {i}: {_structure_str(other)}")
    return ValueError(msg)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Map ``f`` over the leaves of ``tree`` (and matching subtrees of ``rest``).

    Each tree in ``rest`` must have ``tree``'s structure as a prefix: at every
    leaf position of ``tree`` it may hold an arbitrary subtree, which is passed
    to ``f`` whole.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves_ = [leaves]
    for i, r in enumerate(rest, 1):
        try:
            all_leaves_.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise _mismatch_error("tree_map", treedef, tree, i, r, is_leaf, e) from None
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves_)])


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map` but ``f`` also receives each leaf's key path."""
    keypath_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [p for p, _ in keypath_leaves]
    leaves = [x for _, x in keypath_leaves]
    all_leaves_ = [paths, leaves]
    plain_is_leaf = None if is_leaf_takes_path else is_leaf
    for i, r in enumerate(rest, 1):
        try:
            all_leaves_.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise _mismatch_error("tree_map_with_path", treedef, tree, i, r,
                                  plain_is_leaf, e) from None
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves_)])


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def _register(nodetype, entry: _Entry) -> None:
    if nodetype in _BUILTIN_NODE_TYPES or nodetype in _custom:
        what = "custom dataclass " if entry.is_dataclass else "custom "
        raise ValueError(
            f"Duplicate {what}PyTreeDef type registration for {nodetype!r}.")
    _custom[nodetype] = entry
    _kinds[nodetype] = _CUSTOM


def register_pytree_node(nodetype: type, flatten_func: Callable,
                         unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x) -> (children, aux_data)``;
    ``unflatten_func(aux_data, children) -> x``.
    """
    _register(nodetype, _Entry(nodetype, _checked_flatten(flatten_func), unflatten_func,
                               flatten_with_keys_func))


def _checked_flatten(flatten_func):
    """A user's flatten function, whose result must be ``(children, aux_data)`` with iterable
    children: anything else is JAX's ValueError, not a TypeError from deep inside."""
    def flatten(x):
        out = flatten_func(x)
        if type(out) is not tuple or len(out) != 2:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise ValueError("The to_iterable function for a custom PyTree node should "
                                 f"return a (children, aux_data) tuple, got {out!r}")
        children = out[0]
        if type(children) not in (list, tuple):
            try:
                iter(children)
            except TypeError:
                raise ValueError("The to_iterable function for a custom PyTree node should "
                                 "return a (children, aux_data) tuple where 'children' is "
                                 f"iterable, got {tuple(out)!r}") from None
        return out
    return flatten


def register_pytree_node_class(cls):
    """Class decorator: register via ``cls.tree_flatten``/``cls.tree_unflatten``."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                         cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Register a node whose flatten function yields ``(key, child)`` pairs."""
    if not flatten_func:
        def flatten_func(tree):
            key_children, aux = flatten_with_keys(tree)
            return [c for _, c in key_children], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    flatten_func = (operator.methodcaller("tree_flatten")
                    if hasattr(cls, "tree_flatten") else None)
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flatten_func)
    return cls


def register_static(cls):
    """Register ``cls`` as a pytree node with no children (static value)."""
    register_pytree_with_keys(cls, lambda obj: ((), obj), lambda obj, _: obj)
    return cls


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None,
                       drop_fields=()):
    """Register a dataclass-like type as a pytree node.

    With neither ``data_fields`` nor ``meta_fields`` given, ``nodetype`` must be
    a dataclass; fields with ``metadata={'static': True}`` are meta, the rest
    data.  Usable as a bare decorator or via ``functools.partial``; calling
    ``register_dataclass(data_fields=..., meta_fields=...)`` without a type
    returns a decorator too.
    """
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields,
                                              drop_fields)
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be "
                "specified when either is specified. Got "
                f"data_fields={data_fields!r} meta_fields={meta_fields!r}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when"
                f" nodetype is not a dataclass. Got nodetype={nodetype!r}.")
        fields = [f for f in dataclasses.fields(nodetype) if f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]

    meta_fields = tuple(meta_fields)
    data_fields = tuple(data_fields)

    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if {*meta_fields, *data_fields} != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields"
                   " with ``init=True`` and only them.")
            missing = init_fields - {*meta_fields, *data_fields}
            if missing:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to"
                        " suppress this error.")
            unexpected = {*meta_fields, *data_fields} - init_fields
            if unexpected:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)

    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(
            "data_fields and meta_fields must not overlap. Overlapping fields:"
            f" {overlap}.")

    def flatten_func(x):
        return (tuple([getattr(x, name) for name in data_fields]),
                tuple([getattr(x, name) for name in meta_fields]))

    def flatten_with_keys(x):
        return ([(GetAttrKey(name), getattr(x, name)) for name in data_fields],
                tuple([getattr(x, name) for name in meta_fields]))

    def unflatten_func(meta, data):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, data))
        return nodetype(**kwargs)

    _register(nodetype, _Entry(nodetype, flatten_func, unflatten_func,
                               flatten_with_keys, is_dataclass=True,
                               data_fields=data_fields))
    return nodetype


# Built-in registrations mirroring JAX.
register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), x[k]) for k in x.keys()), tuple(x.keys())),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
)


def _flatten_defaultdict_with_keys(d):
    keys = tuple(_sorted_keys(d))
    return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    _flatten_defaultdict_with_keys,
    lambda s, values: collections.defaultdict(s[0], zip(s[1], values)),
)


# -- Partial, tree_broadcast, tree_reduce_associative, KeyEntry/KeyPath (as jax.tree_util) --

T = TypeVar("T")
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyLeafPairs = Iterable[KeyLeafPair]
KeyPath = tuple[KeyEntry, ...]


def _parallel_reduce(sequence: list, operation: Callable, identity):
    length = len(sequence)
    if length == 0:
        if isinstance(identity, _Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if length == 1:
        return sequence[0]
    half = length // 2
    return operation(_parallel_reduce(sequence[:half], operation, identity),
                     _parallel_reduce(sequence[half:], operation, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = _Unspecified(),
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduces the leaves of ``tree`` with an associative ``operation`` in a balanced
    (logarithmic-depth) order; ``identity`` is returned for an empty tree."""
    return _parallel_reduce(tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``prefix_tree``, each repeated once per leaf of the matching
    subtree of ``full_tree``."""
    result: list = []

    def add_leaves(x, subtree):
        result.extend([x] * tree_structure(subtree).num_leaves)
    try:
        tree_map(add_leaves, prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        err = next(_prefix_error((), prefix_tree, full_tree, is_leaf), None)
        if err is None:
            raise
        raise err("broadcast_prefix prefix_tree") from None
    return result


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Broadcasts a tree prefix into the full structure of ``full_tree``:
    ``tree_broadcast((1, 2), (0, {'a': 0, 'b': 0}))`` is ``(1, {'a': 2, 'b': 2})``."""
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


class _HashableCallableShim:
    """Delegates call, hash and equality to ``fun``: boxes a ``functools.partial`` so
    that ``Partial`` does not merge its arguments into its own."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are its leaves and the
    function is static, so a ``Partial`` can be passed through ``jit``, ``vmap``..."""

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(klass, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda partial_: ((partial_.args, partial_.keywords), partial_.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
