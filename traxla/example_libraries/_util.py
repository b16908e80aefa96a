"""What the example libraries take from JAX's internals and namespace, from traxla's."""
from __future__ import annotations

import types

from traxla.autodiff import value_and_grad
from traxla import random, tree_util


def safe_map(f, *args):
    args = list(map(list, args))
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def safe_zip(*args):
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(zip(*args))


def unzip2(xys):
    xs, ys = [], []
    for x, y in xys:
        xs.append(x)
        ys.append(y)
    return tuple(xs), tuple(ys)


def _value_and_grad(*args, **kwargs):
    return value_and_grad(*args, **kwargs)


tree = types.SimpleNamespace(flatten=tree_util.tree_flatten, unflatten=tree_util.tree_unflatten,
                             map=tree_util.tree_map)
jax_namespace = types.SimpleNamespace(tree=tree, tree_util=tree_util, random=random,
                                      value_and_grad=_value_and_grad)
