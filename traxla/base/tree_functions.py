"""The functions over whole pytrees: ``tree_map`` (and with paths), reductions,
``tree_transpose``, prefix broadcasting, and JAX's explanations of a tree that is not
a prefix of another."""
from __future__ import annotations

import difflib
import functools
import textwrap
from typing import Any, Callable, TypeVar

from traxla.base.flattening import (_child_keys, flatten_one_level, tree_flatten,
                                    tree_flatten_with_path, tree_leaves, tree_structure,
                                    treedef_is_strict_leaf)
from traxla.base.key_paths import keystr
from traxla.base.treedef import PyTreeDef

T = TypeVar("T")


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


def _structure_error(what, name, key_path, prefix_tree, prefix_has=None, full_has=None):
    """The opening of every ``_prefix_error`` message: what differs, where, the type of the
    prefix pytree's subtree there and (same type) what each subtree has."""
    message = (f"pytree structure error: different {what} at key path\n"
               f"    {name}{keystr(key_path)}\n"
               f"At that key path, the prefix pytree {name} has a subtree of type\n"
               f"    {type(prefix_tree)}\n")
    if prefix_has is not None:
        message += (f"with {prefix_has}\n"
                    "but at the same key path the full pytree has a subtree of the same type "
                    f"but with {full_has}\n")
    return message


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf=None):
    """Port of JAX's ``_prefix_error``: yields ``name -> ValueError`` makers."""
    if treedef_is_strict_leaf(tree_structure(prefix_tree, is_leaf=is_leaf)):
        return

    if type(prefix_tree) != type(full_tree):
        yield lambda name: ValueError(
            _structure_error("types", name, key_path, prefix_tree)
            + f"but at the same key path the full pytree has a subtree of different type\n"
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
                _structure_error(
                    "numbers of pytree children", name, key_path, prefix_tree,
                    f"{len(prefix_children)} child keys\n"
                    f"    {' '.join(str(k.key) for k in prefix_keys)}",
                    f"{len(full_children)} child keys\n"
                    f"    {' '.join(str(k.key) for k in full_keys)}")
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
            _structure_error("pytree metadata", name, key_path, prefix_tree,
                             f"metadata\n    {prefix_meta_str}",
                             f"metadata\n    {full_meta_str}")
            + f"so the diff in the metadata at these pytree nodes is\n"
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
