"""Names of a function's argument leaves (``x``, ``args[1]``, ``d['a']``), as JAX prints them
in error messages and residual listings."""
from __future__ import annotations

import inspect

from traxla.base.flattening import tree_flatten_with_path
from traxla.base.key_paths import keystr


def leaf_names(prefix: str, value) -> list[str]:
    """``prefix`` followed by the key path of each leaf of ``value``."""
    paths, _ = tree_flatten_with_path(value)
    return [prefix + keystr(path) for path, _ in paths]


def bound_leaf_names(sig: inspect.Signature, bound: inspect.BoundArguments) -> list[str]:
    """The leaf names of every bound argument (``*args`` entries as ``args[j]``, ``**kwargs``
    entries as ``kwargs['k']``)."""
    names = []
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            for j, v in enumerate(value):
                names += leaf_names(f"{name}[{j}]", v)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            for k, v in value.items():
                names += leaf_names(f"{name}['{k}']", v)
        else:
            names += leaf_names(name, value)
    return names
