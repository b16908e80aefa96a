"""Collectives over named mesh axes, for use inside ``shard_map``: the reductions (``psum``,
``pmax``, ``pmin``, ``pmean``), ``all_gather``, ``psum_scatter``, ``ppermute`` and ``pshuffle``,
``all_to_all`` and ``pswapaxes``, ``axis_index`` and ``axis_size``."""
from __future__ import annotations

import numpy as np

from traxla import tree_util
from traxla.ir.rules.all_to_all import all_to_all_p
from traxla.ir.thread_state import axis_env
from traxla.ir.rules.collectives import (all_gather_p, axis_index_p, pmax_p, pmin_p, ppermute_p,
                                    psum_p, psum_scatter_p)
from traxla.primitives.shapes import expand_dims, squeeze
from traxla.primitives.values import shape_of


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


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Materializes the mapped axis ``axis_name`` at ``concat_axis`` and maps ``split_axis``
    instead (``tiled``: the chunks stay concatenated along the existing axes)."""
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups is not supported by traxla "
                                  "(shard_map over a sub-mesh expresses the same groups).")
    size = axis_size(axis_name)

    def bind(x, split_axis=split_axis, concat_axis=concat_axis):
        shape = shape_of(x)
        if tiled:
            if shape[split_axis] % size != 0:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has "
                                 f"to be divisible by the size of the named axis {axis_name} "
                                 f"({size})")
        else:
            if size != shape[split_axis]:
                raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                                 "equal x.shape[split_axis], but they are "
                                 f"{size} and {shape[split_axis]} respectively.")
            if split_axis < concat_axis:
                concat_axis += 1
                x = expand_dims(x, (concat_axis,))
            elif split_axis > concat_axis:
                x = expand_dims(x, (concat_axis,))
                split_axis += 1
        result = all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                   axis_name=axis_name, axis_index_groups=None, tiled=tiled,
                                   axis_size=size)
        if not tiled and split_axis != concat_axis:
            result = squeeze(result, (split_axis,))
        return result

    return tree_util.tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the mapped axis ``axis_name`` with the unmapped ``axis``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pshuffle(x, axis_name, perm):
    """``ppermute`` where the output at axis index i comes from input index ``perm[i]``."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))
