"""Collectives over named mesh axes, for use inside ``shard_map``."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.ir.thread_state import axis_env
from traxla.ir.rules.collectives import (all_gather_p, axis_index_p, pmax_p, pmin_p, ppermute_p,
                                    psum_p, psum_scatter_p)


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def axis_size(axis_name) -> int:
    names = _names(axis_name)
    for mesh in reversed(axis_env):
        if all(n in mesh.axis_names for n in names):
            return int(np.prod([mesh.axis_size(n) for n in names]))
    raise NameError(f"unbound axis name: {names[0] if len(names) == 1 else names}. Collectives need a mesh axis bound by an "
                    "enclosing traxla.shard_map.")


def _reduce(prim, x, axis_name):
    names = _names(axis_name)
    axis_size(names)  # checks the names are bound
    return tree_util.tree_map(lambda leaf: prim.bind(leaf, axes=names, axis_index_groups=None), x)


def psum(x, axis_name):
    return _reduce(psum_p, x, axis_name)


def pmax(x, axis_name):
    return _reduce(pmax_p, x, axis_name)


def pmin(x, axis_name):
    return _reduce(pmin_p, x, axis_name)


def pmean(x, axis_name):
    n = axis_size(axis_name)
    return tree_util.tree_map(lambda s: s / n, psum(x, axis_name))


def all_gather(x, axis_name, *, axis=0, tiled=False):
    size = axis_size(axis_name)
    return tree_util.tree_map(lambda leaf: all_gather_p.bind(
        leaf, all_gather_dimension=int(axis), axis_name=axis_name, axis_size=size,
        tiled=bool(tiled)), x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, tiled=False):
    size = axis_size(axis_name)
    return tree_util.tree_map(lambda leaf: psum_scatter_p.bind(
        leaf, scatter_dimension=int(scatter_dimension), axis_name=axis_name, axis_size=size,
        tiled=bool(tiled)), x)


def ppermute(x, axis_name, perm):
    size = axis_size(axis_name)
    perm = tuple((int(s), int(d)) for s, d in perm)
    for s, d in perm:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(f"ppermute perm {perm} has an index outside the axis of size {size}")
    return tree_util.tree_map(lambda leaf: ppermute_p.bind(leaf, axis_name=axis_name, perm=perm), x)


def axis_index(axis_name):
    axis_size(axis_name)
    return axis_index_p.bind(axis_name=axis_name)
