"""Treedefs: the structure of a pytree (``PyTreeDef``), its node representation,
unflattening (interpreted, then compiled to a straight-line function) and
``flatten_up_to``.

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
"""
from __future__ import annotations

from typing import Any, Iterable

from traxla.base.pytree_registry import (_CUSTOM, _DICT, _LEAF, _LIST, _NAMEDTUPLE, _NONE,
                                         _TUPLE, _NoneType, _sorted_keys)

_LEAF_NODE = (_LEAF, None, ())
_NONE_NODE = (_NONE, None, ())

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


# Compiled builders shared between equal structures (node -> builder), for plain nodes
# only: builtin containers whose dict keys are exactly ``str`` (equal nodes of that kind
# rebuild identical trees; a str-subclass key, an Enum say, equals its str but is not
# it, and a custom node's aux data may compare equal loosely). Bounded.
_compiled: dict = {}
_seen: set = set()  # structures unflattened once (by some treedef): the next use compiles
_MAX_SHARED_BUILDERS = 1024


def _share(node):
    """The compiled builder of ``node``, kept for equal structures when shareable."""
    b = _compile_builder(node)
    if _shareable(node):  # (then hashable: builtin containers, str keys)
        if len(_compiled) >= _MAX_SHARED_BUILDERS:
            _compiled.clear()
        _compiled[node] = b
    return b


def _shareable(node) -> bool:
    try:
        return _plain(node)
    except RecursionError:
        return False


def _plain(node) -> bool:
    k, data, ch = node
    if k == _CUSTOM:
        return False
    if k == _DICT:
        for key in data:
            if type(key) is not str:
                return False
    for c in ch:
        if c is not _LEAF_NODE and not _plain(c):
            return False
    return True


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
    if k == _TUPLE or k == _LIST:
        if t is not (tuple if k == _TUPLE else list):
            raise ValueError(f"Expected {'tuple' if k == _TUPLE else 'list'}, got {x!r}.")
        if len(x) != len(ch):
            what = "tuple" if k == _TUPLE else "list"
            raise ValueError(
                f"{what.capitalize()} arity mismatch: {len(x)} != {len(ch)}; {what}: {x!r}.")
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
            # First use: interpret, unless an equal structure was compiled before (a
            # fresh jit of the same function).  Treedefs that get reused (e.g. a jit
            # cache's output treedef) are compiled on their second use.
            try:
                known = node in _compiled or node in _seen
            except TypeError:  # unhashable custom aux data
                known = False
            if known and _shareable(node):
                b = self._builder = _compiled.get(node) or _share(node)  # (met twice)
                return b(leaves)
            self._builder = False
            if not known and _shareable(node):
                if len(_seen) >= _MAX_SHARED_BUILDERS:
                    _seen.clear()
                _seen.add(node)
            return _build(node, iter(leaves))
        b = self._builder = _share(node)
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
