"""The registry of pytree node types: the node kinds, the exact-type dispatch table
(``_kinds``), custom registrations (``_custom``) and the ``register_*`` functions, with
JAX's built-in registrations (``OrderedDict``, ``defaultdict``).

Dispatch is through ``_kinds``, a dict keyed by the *exact* type of a value.
Types not yet seen are classified once (leaf or namedtuple) and cached; a
registration overwrites the cached entry.  As in JAX, subclasses of
``tuple``/``list``/``dict`` (other than namedtuples) are leaves unless
registered.
"""
from __future__ import annotations

import collections
import dataclasses
import operator
from typing import Callable

from traxla.base.key_paths import DictKey, GetAttrKey

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


def is_tree_node(typ: type) -> bool:
    """True if ``typ`` is a pytree node type (built-in, namedtuple or registered)."""
    k = _kinds.get(typ)
    if k is None:
        k = _classify(typ)
    return k != _LEAF


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
