"""``jax._src.tree_util``: the public tree utilities, the registry of pytree node types
(``_registry``: built-in containers and registered classes, as JAX's dict) and
``prefix_errors``."""
from __future__ import annotations

import collections
from collections.abc import Mapping

from traxla.base import pytree_registry as _reg
from traxla.tree_util import *  # noqa: F401,F403
from traxla.tree_util import __all__ as _public
from traxla.base.tree_functions import _prefix_error


class _RegistryView(Mapping):
    """The node types JAX's registry holds: None, tuple, list, dict, OrderedDict,
    defaultdict, and every registered class (namedtuples are nodes but not in it)."""

    _BUILTIN = (type(None), tuple, list, dict, collections.OrderedDict,
                collections.defaultdict)

    def __getitem__(self, t):
        entry = _reg._custom.get(t)
        if entry is not None:
            return entry
        if t in self._BUILTIN:
            return t
        raise KeyError(t)

    def __contains__(self, t):
        return t in _reg._custom or t in self._BUILTIN

    def __iter__(self):
        return iter(list(self._BUILTIN) + [t for t in _reg._custom if t not in self._BUILTIN])

    def __len__(self):
        return len(set(self._BUILTIN) | set(_reg._custom))


_registry = _RegistryView()


def prefix_errors(prefix_tree, full_tree, is_leaf=None):
    """Callables, one per place where ``prefix_tree`` is not a prefix of ``full_tree``;
    each, given the argument's name, returns the ValueError describing it."""
    return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


__all__ = list(_public) + ["_registry", "prefix_errors"]
