"""``tree_util`` names beyond flatten/map: ``Partial``, ``tree_broadcast``,
``tree_reduce_associative`` and the ``KeyEntry``/``KeyPath`` aliases, as JAX has them.
Kept apart from ``tree_util.py`` (already large); ``tree_util`` re-exports them."""
from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, TypeVar

from . import tree_util as _tu

T = TypeVar("T")
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyLeafPairs = Iterable[KeyLeafPair]
KeyPath = tuple[KeyEntry, ...]


class _Unspecified:
    def __repr__(self):
        return "Unspecified"


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
    return _parallel_reduce(_tu.tree_leaves(tree, is_leaf=is_leaf), operation, identity)


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of ``prefix_tree``, each repeated once per leaf of the matching
    subtree of ``full_tree``."""
    result: list = []

    def add_leaves(x, subtree):
        result.extend([x] * _tu.tree_structure(subtree).num_leaves)
    try:
        _tu.tree_map(add_leaves, prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        err = next(_tu._prefix_error((), prefix_tree, full_tree, is_leaf), None)
        if err is None:
            raise
        raise err("broadcast_prefix prefix_tree") from None
    return result


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Broadcasts a tree prefix into the full structure of ``full_tree``:
    ``tree_broadcast((1, 2), (0, {'a': 0, 'b': 0}))`` is ``(1, {'a': 2, 'b': 2})``."""
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
    return _tu.tree_structure(full_tree).unflatten(leaves)


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


_tu.register_pytree_node(
    Partial,
    lambda partial_: ((partial_.args, partial_.keywords), partial_.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
