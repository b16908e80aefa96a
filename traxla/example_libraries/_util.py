"""What the example libraries take from JAX's internals and namespace, from traxla's."""
from __future__ import annotations

import types

from traxla.autodiff import value_and_grad
from traxla import random, tree_util
from traxla.base.sequences import safe_map, safe_zip, unzip2  # noqa: F401


def _value_and_grad(*args, **kwargs):
    return value_and_grad(*args, **kwargs)


tree = types.SimpleNamespace(flatten=tree_util.tree_flatten, unflatten=tree_util.tree_unflatten,
                             map=tree_util.tree_map)
jax_namespace = types.SimpleNamespace(tree=tree, tree_util=tree_util, random=random,
                                      value_and_grad=_value_and_grad)
