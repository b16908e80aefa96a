"""``numpy.linalg``'s norms and products (``norm``, ``vector_norm``, ``matrix_norm``, ``cross``,
``outer``, ``vecdot``, ``matmul``, ``tensordot``, ``diagonal``, ``trace``, ``multi_dot``,
``matrix_transpose``), as JAX defines them; re-exported by ``traxla.numpy.linalg``."""
from __future__ import annotations

import itertools

import numpy as np

from traxla import lax, numpy
from traxla.ir import dtypes
from traxla.numpy import _reductions, _diagonals_tiles as _lax_numpy, _shape as shape_mod
from traxla.numpy._einsum import einsum as _einsum, tensordot as _tensordot
from traxla.numpy._jitutil import jit_named
from traxla.numpy._linalg import matmul as _matmul, vdot
from traxla.numpy._promotion import ensure_arraylike, promote_dtypes_inexact, promote_dtypes
from traxla.numpy._shape import (broadcast_to as _broadcast_to, expand_dims as _expand_dims,
                                 moveaxis, concatenate)
import traxla.numpy.linalg as _numpy_linalg
from traxla.batching import vmap


class _Namespace:
    """``traxla.numpy`` looked up at call time (its ufuncs are installed after this module's
    imports run)."""

    def __getattr__(self, name):
        return getattr(numpy, name)


_ufuncs = _Namespace()


def _shape(x):
    return tuple(lax.shape_of(x))


def _ndim(x):
    return len(lax.shape_of(x))


def _svd_values(x):
    return _numpy_linalg.svd(x, compute_uv=False)


# -- norms ----------------------------------------------------------------------------------------

def _canon_axis(axis, ndim):
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _abs2_sum(x, axis=None, keepdims=False):
    return _ufuncs.sqrt(_reductions.sum(_ufuncs.real(x * _ufuncs.conjugate(x)), axis=axis,
                                        keepdims=keepdims))


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.norm", x)
    x, = promote_dtypes_inexact(x)
    ndim = _ndim(x)
    if axis is None:
        if ord is None:
            return _abs2_sum(x, keepdims=keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_canon_axis(a, ndim) for a in axis)
    else:
        axis = (_canon_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row_axis, col_axis = axis
    if ord is None or ord in ("f", "fro"):
        return _abs2_sum(x, axis=axis, keepdims=keepdims)
    if ord == 1:
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        return _reductions.amax(_reductions.sum(_ufuncs.abs(x), axis=row_axis, keepdims=keepdims),
                                axis=col_axis, keepdims=keepdims, initial=0)
    if ord == -1:
        if not keepdims and col_axis > row_axis:
            col_axis -= 1
        return _reductions.amin(_reductions.sum(_ufuncs.abs(x), axis=row_axis, keepdims=keepdims),
                                axis=col_axis, keepdims=keepdims)
    if ord == np.inf:
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        return _reductions.amax(_reductions.sum(_ufuncs.abs(x), axis=col_axis, keepdims=keepdims),
                                axis=row_axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        if not keepdims and row_axis > col_axis:
            row_axis -= 1
        return _reductions.amin(_reductions.sum(_ufuncs.abs(x), axis=col_axis, keepdims=keepdims),
                                axis=row_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        x = moveaxis(x, axis, (-2, -1))
        s = _svd_values(x)
        if ord == 2:
            y = _reductions.amax(s, axis=-1, initial=0)
        elif ord == -2:
            y = _reductions.amin(s, axis=-1)
        else:
            y = _reductions.sum(s, axis=-1)
        if keepdims:
            y = _expand_dims(y, axis)
        return y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


norm = jit_named(_norm, "norm", ("ord", "axis", "keepdims"))


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return _abs2_sum(x, axis=axis, keepdims=keepdims)
    if ord == np.inf:
        return _reductions.amax(_ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _reductions.amin(_ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        dt = np.dtype(dtypes.finfo(lax.dtype_of(x)).dtype) if dtypes.is_inexact(
            lax.dtype_of(x)) else dtypes.default_float()
        return _reductions.sum(x != 0, dtype=dt, axis=axis, keepdims=keepdims)
    if ord == 1:
        return _reductions.sum(_ufuncs.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    abs_x = _ufuncs.abs(x)
    ord_arr = lax._const(abs_x, ord)
    ord_inv = lax._const(abs_x, 1.0 / ord)
    out = _reductions.sum(_ufuncs.power(abs_x, ord_arr), axis=axis, keepdims=keepdims)
    return _ufuncs.power(out, ord_inv)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    x = ensure_arraylike("jnp.linalg.matrix_norm", x)
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


# -- products and shape helpers --------------------------------------------------------------------

def matrix_transpose(x, /):
    x_arr = ensure_arraylike("jnp.linalg.matrix_transpose", x)
    ndim = _ndim(x_arr)
    if ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got ndim={ndim!r}")
    return lax.transpose(x_arr, (*range(ndim - 2), ndim - 1, ndim - 2))


def _cross_impl(x1, x2, axis):
    x1, x2 = _promote_same(x1, x2)
    a = shape_mod.moveaxis(x1, axis, -1)
    b = shape_mod.moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = _stack_last([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return shape_mod.moveaxis(out, -1, axis)


_cross = jit_named(_cross_impl, "cross", ("axis",))


def cross(x1, x2, /, *, axis=-1):
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if _shape(x1)[axis] != 3 or _shape(x2)[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                         f"have x1.shape[axis]={_shape(x1)[axis]!r} and "
                         f"x2.shape[axis]={_shape(x2)[axis]!r}")
    return _cross(x1, x2, axis)


def _promote_same(x1, x2):
    return promote_dtypes(x1, x2)


def _stack_last(parts):
    return concatenate([_expand_dims(p, -1) for p in parts], axis=-1)


def outer(x1, x2, /):
    x1, x2 = ensure_arraylike("jnp.linalg.outer", x1, x2)
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={_ndim(x1)!r} "
                         f"x2.ndim={_ndim(x2)!r}")
    return x1[:, None] * x2[None, :]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    x1, x2 = ensure_arraylike("jnp.linalg.vecdot", x1, x2)
    if _shape(x1)[axis] != _shape(x2)[axis]:
        raise ValueError(f"axes must match; got shapes {_shape(x1)} and {_shape(x2)} with "
                         f"axis={axis}")
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if _shape(x1)[:-1] != _shape(x2)[:-1]:
        batch = tuple(np.broadcast_shapes(_shape(x1)[:-1], _shape(x2)[:-1]))
        x1 = _broadcast_to(x1, batch + _shape(x1)[-1:])
        x2 = _broadcast_to(x2, batch + _shape(x2)[-1:])
    fn = lambda a, b: vdot(a, b, precision=precision,  # noqa: E731
                           preferred_element_type=preferred_element_type)
    for _ in range(_ndim(x1) - 1):   # jnp.vectorize's "(n),(n)->()"
        fn = vmap(fn)
    return fn(x1, x2)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    x1, x2 = ensure_arraylike("jnp.linalg.matmul", x1, x2)
    return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
    x1, x2 = ensure_arraylike("jnp.linalg.tensordot", x1, x2)
    kwargs = {} if out_sharding is None else {"out_sharding": out_sharding}
    return _tensordot(x1, x2, axes=axes, precision=precision,
                      preferred_element_type=preferred_element_type, **kwargs)


def diagonal(x, /, *, offset=0):
    x = ensure_arraylike("jnp.linalg.diagonal", x)
    return _lax_numpy.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x, /, *, offset=0, dtype=None):
    x = ensure_arraylike("jnp.linalg.trace", x)
    return _lax_numpy.trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def multi_dot(arrays, *, precision=None):
    arrs = list(ensure_arraylike("jnp.linalg.multi_dot", *arrays))
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrs)}")
    if not (_ndim(arrs[0]) in (1, 2) and _ndim(arrs[-1]) in (1, 2)
            and all(_ndim(a) == 2 for a in arrs[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the "
                         "first and last array which may be 1 or 2 dimensional. Got array shapes "
                         f"{[_shape(a) for a in arrs]}")
    if any(_shape(a)[-1] != _shape(b)[0] for a, b in zip(arrs[:-1], arrs[1:])):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of "
                         f"following array. Got array shapes {[_shape(a) for a in arrs]}")
    einsum_axes = [(i, i + 1) for i in range(len(arrs))]
    if _ndim(arrs[0]) == 1:
        einsum_axes[0] = einsum_axes[0][1:]
    if _ndim(arrs[-1]) == 1:
        einsum_axes[-1] = einsum_axes[-1][:1]
    return _einsum(*itertools.chain(*zip(arrs, einsum_axes)), optimize="auto",
                   precision=precision)
