"""Sparse-aware ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev`` (JAX's
``jax.experimental.sparse.ad``): with respect to a sparse argument, the derivative is taken
with respect to its stored ``data`` only and returned as a sparse array of the same
sparsity pattern."""
from __future__ import annotations

import functools
import itertools
import operator

from traxla import autodiff
from traxla.batching import vmap
from traxla.experimental.sparse._base import JAXSparse
from traxla.tree_util import tree_flatten, tree_leaves, tree_unflatten


def is_sparse(x):
    return isinstance(x, JAXSparse)


def _ensure_index_tuple(x):
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def _split(seq, sizes):
    out, start = [], 0
    for n in sizes:
        out.append(list(seq[start:start + n]))
        start += n
    return out


def flatten_fun_for_sparse_ad(fun, argnums, args):
    argnums_tup = _ensure_index_tuple(argnums)
    if not all(0 <= a < len(args) for a in argnums_tup):
        raise ValueError(f"argnums {argnums} out of range for {len(args)} positional arguments")
    # Arguments -> sparse and dense objects -> dense buffers; argnums follow both steps.
    args_flat1, tree1 = tree_flatten(args, is_leaf=is_sparse)
    leaf_argnums1 = _split(range(tree1.num_leaves), [c.num_leaves for c in tree1.children()])
    argnums_flat1 = list(itertools.chain.from_iterable(
        nums for i, nums in enumerate(leaf_argnums1) if i in argnums_tup))
    args_flat, tree2 = tree_flatten(args_flat1)
    leaf_argnums2 = _split(range(tree2.num_leaves), [c.num_leaves for c in tree2.children()])
    # a sparse argument is differentiated through its first buffer (the data) only
    leaf_argnums2 = [nums[:1] if is_sparse(arg) else nums
                     for arg, nums in zip(args_flat1, leaf_argnums2)]
    argnums_flat = tuple(itertools.chain.from_iterable(
        nums for i, nums in enumerate(leaf_argnums2) if i in argnums_flat1))

    def fun_flat(*flat, **kwargs):
        return fun(*tree_unflatten(tree1, tree_unflatten(tree2, list(flat))), **kwargs)

    def reconstruct(i, grad_out):
        bufs, tree = tree_flatten(args_flat1[i])
        f_recons = lambda g: tree_unflatten(tree, [g, *bufs[1:]])  # noqa: E731
        for _ in range(grad_out.ndim - bufs[0].ndim):
            f_recons = vmap(f_recons)
        return f_recons(grad_out)

    def postprocess_gradients(grads_out):
        leaf_grads = [None] * tree1.num_leaves
        for i, g in zip(argnums_flat1, grads_out):
            leaf_grads[i] = reconstruct(i, g)
        grad_tree = tree_unflatten(tree1, leaf_grads)
        grad_tree = tuple(x for x in grad_tree if tree_leaves(x))
        return grad_tree[0] if len(grad_tree) == 1 else grad_tree

    return fun_flat, argnums_flat, args_flat, postprocess_gradients


def _sparse_ad(transform, fun, argnums, has_aux, kwargs, returns_value=False):
    _ensure_index_tuple(argnums)

    @functools.wraps(fun)
    def wrapped(*args, **call_kwargs):
        fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(fun, argnums, args)
        out = transform(fun_flat, argnums=argnums_flat, has_aux=has_aux,
                        **kwargs)(*args_flat, **call_kwargs)
        if returns_value:
            return out[0], post(out[1])
        if has_aux:
            return post(out[0]), out[1]
        return post(out)
    return wrapped


def value_and_grad(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware version of ``value_and_grad``."""
    return _sparse_ad(autodiff.value_and_grad, fun, argnums, has_aux, kwargs,
                      returns_value=True)


def grad(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware version of ``grad``."""
    return _sparse_ad(autodiff.grad, fun, argnums, has_aux, kwargs)


def jacfwd(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware version of ``jacfwd`` (dense outputs)."""
    return _sparse_ad(autodiff.jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware version of ``jacrev`` (dense outputs)."""
    return _sparse_ad(autodiff.jacrev, fun, argnums, has_aux, kwargs)


jacobian = jacrev


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Callable
from collections.abc import Sequence
from traxla.base.sequences import safe_zip
from traxla.base.sequences import split_list
from typing import Any
import traxla as jax
import traxla._src.core as core
import traxla.tree_util as tree_util
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's sparse internals (its sparse primitives and their rules; traxla's sparse operations are compositions of lax operations)",
      functions='api_boundary wraps')
