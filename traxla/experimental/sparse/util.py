"""Helpers shared by ``traxla.experimental.sparse`` (JAX's ``jax.experimental.sparse.util``):
the sparse-info record, the efficiency errors, n-fold (broadcasting) vmap and the count of
stored elements."""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from traxla import lax, numpy as jnp
from traxla.api.shape_dtype_struct import ShapeDtypeStruct, eval_shape
from traxla.batching import vmap
from traxla.tree_util import tree_flatten, tree_unflatten


class SparseEfficiencyError(ValueError):
    pass


class SparseEfficiencyWarning(UserWarning):
    pass


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    pass


Shape = tuple[int, ...]


class SparseInfo(NamedTuple):
    shape: tuple
    indices_sorted: bool = False
    unique_indices: bool = False


def nfold_vmap(fun, N, *, broadcasted=True, in_axes=0):
    """``fun`` vmapped ``N`` times (broadcasting size-1 axes when ``broadcasted``)."""
    _vmap = broadcasting_vmap if broadcasted else vmap
    for _ in range(N):
        fun = _vmap(fun, in_axes=in_axes)
    return fun


def _flatten_axes(in_tree, in_axes):
    if isinstance(in_axes, int) or in_axes is None:
        return [in_axes] * in_tree.num_leaves
    # in_axes is a tuple matching the top-level arguments
    out = []
    for sub, ax in zip(tree_unflatten(in_tree, [0] * in_tree.num_leaves), in_axes):
        out.extend([ax] * len(tree_flatten(sub)[0]))
    return out


def broadcasting_vmap(fun, in_axes=0, out_axes=0):
    """vmap that treats a mapped axis of size 1 as unmapped (broadcast), as JAX's."""
    @functools.wraps(fun)
    def batched_fun(*args):
        args_flat, in_tree = tree_flatten(args)
        axes_flat = _flatten_axes(in_tree, in_axes)
        size = max(a.shape[i] for a, i in zip(args_flat, axes_flat) if i is not None)
        if size > 1:
            if any(i is not None and a.shape[i] not in (1, size)
                   for a, i in zip(args_flat, axes_flat)):
                raise ValueError("broadcasting_vmap: mismatched input shapes")
            args_flat, axes_flat = zip(*(
                (a, None) if i is None else
                (lax.squeeze(a, (i,)), None) if a.shape[i] == 1 else (a, i)
                for a, i in zip(args_flat, axes_flat)))
        new_args = tree_unflatten(in_tree, list(args_flat))
        new_axes = tree_unflatten(in_tree, list(axes_flat))
        return vmap(fun, in_axes=new_axes, out_axes=out_axes)(*new_args)
    return batched_fun


def _count_stored_elements_per_batch(mat, n_batch=0, n_dense=0):
    mat = jnp.asarray(mat)
    mask = mat != 0
    if n_dense > 0:
        mask = mask.any(tuple(-(i + 1) for i in range(n_dense)))
    return mask.sum(tuple(range(n_batch, mask.ndim)))


def _count_stored_elements(mat, n_batch=0, n_dense=0):
    """The number of stored elements (nse) a BCOO form of ``mat`` needs."""
    return _count_stored_elements_per_batch(mat, n_batch, n_dense).max(initial=0)


def _dot_general_validated_shape(lhs_shape, rhs_shape, dimension_numbers):
    """The output shape of ``lax.dot_general`` on these shapes, or its error."""
    out = eval_shape(functools.partial(lax.dot_general, dimension_numbers=dimension_numbers),
                     ShapeDtypeStruct(tuple(lhs_shape), np.float32),
                     ShapeDtypeStruct(tuple(rhs_shape), np.float32))
    return tuple(out.shape)


def _remaining(original, *removed_lists):
    removed = set()
    for r in removed_lists:
        removed.update(r)
    return [i for i in original if i not in removed]


# The other names of JAX's module (mostly its imports), as JAX's
from traxla import Array
from traxla.base.sequences import safe_zip
from traxla.lax import DotDimensionNumbers
import traxla as jax
import traxla._src.core as core
import traxla.tree_util as tree_util
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      functions='flatten_axes')
