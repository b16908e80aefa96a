"""Vector-space operations on pytrees of arrays, shared by the Krylov solvers of
``traxla.scipy.sparse.linalg`` (JAX's ``_src/scipy/sparse/linalg.py`` helpers)."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from traxla import lax, numpy as jnp
from traxla.numpy import _einsum as jnp_einsum
from traxla.runtime import ArrayImpl
from traxla.tracer import Tracer
from traxla.tree_util import Partial, tree_leaves, tree_map

_dot = partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = partial(jnp.vdot, precision=lax.Precision.HIGHEST)
_einsum = partial(jnp_einsum.einsum, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x, y):
    """Real part of ``vdot`` without the real-imaginary cross terms: the solvers only
    form ``z^H M z`` with Hermitian positive-definite ``M``, which is real."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x):
    xs = tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar, tree):
    return tree_map(partial(operator.mul, scalar), tree)


_add = partial(tree_map, operator.add)
_sub = partial(tree_map, operator.sub)


@Partial
def _identity(x):
    return x


def _normalize_matvec(f):
    """A matrix-vector product function for ``f``: a function, a square matrix, or an
    object with ``__matmul__``."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, ArrayImpl, Tracer)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(
                f'linear operator must be a square matrix, but has shape: {f.shape}')
        return partial(_dot, f)
    if hasattr(f, '__matmul__'):
        if hasattr(f, 'shape') and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(
                f'linear operator must be a square matrix, but has shape: {f.shape}')
        return partial(operator.matmul, f)
    raise TypeError(f'linear operator must be either a function or ndarray: {f}')


def _shapes(pytree):
    return [np.shape(leaf) for leaf in tree_leaves(pytree)]
