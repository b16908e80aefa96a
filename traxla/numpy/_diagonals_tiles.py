"""Array-manipulation functions of ``jax.numpy`` built from lax primitives: ``trace``,
``diagonal``, ``tri``/``tril``/``triu``, ``roll``, ``tile``, ``repeat``, ``meshgrid``,
each binding what ``jax.numpy`` binds (with the same inner ``jit`` names)."""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.tracer import Tracer
from traxla.numpy._creation import arange, eye, zeros_like, array, asarray, full, zeros
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import (check_arraylike, ensure_arraylike, broadcast_shapes,
                                     promote_dtypes)
from traxla.numpy._shape import canonicalize_axis, moveaxis, broadcast_to, ravel, reshape
from traxla.numpy._reductions import sum as _sum, cumsum
from traxla.numpy._ufuncs import where, remainder, ufuncs
from traxla.api import jit
from traxla.numpy._indexing import take


def _ensure(name, *args):
    return ensure_arraylike(name, *args)


def _ndim(x):
    return len(lax.shape_of(x))


# -- tri, tril, triu ---------------------------------------------------------------------------

def tri(N, M=None, k=0, dtype=None):
    dtype = np.dtype(np.float32) if dtype is None else dtypes.to_dtype(dtype)
    M = M if M is not None else N
    return lax._lift(lax._tri(dtype, (N, M), k))


def _tri_select(name, m, k, lower):
    """``m`` with the entries outside its lower (``tril``) or upper (``triu``) triangle zeroed,
    through one ``tri`` mask broadcast over the leading dimensions."""
    m = _ensure(name, m)
    m_shape = lax.shape_of(m)
    if len(m_shape) < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    N, M = m_shape[-2:]
    mask = lax.broadcast(tri(N, M, k=k if lower else k - 1, dtype=bool), m_shape[:-2])
    return lax.select(mask, m, zeros_like(m)) if lower else lax.select(mask, zeros_like(m), m)


def _tril(m, k=0):
    return _tri_select("tril", m, k, lower=True)


def _triu(m, k=0):
    return _tri_select("triu", m, k, lower=False)


tril = jit_named(_tril, "tril", ("k",))
triu = jit_named(_triu, "triu", ("k",))


# -- trace, diagonal ---------------------------------------------------------------------------

def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    a = _ensure("trace", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    nd = _ndim(a)
    if canonicalize_axis(axis1, nd) == canonicalize_axis(axis2, nd):
        raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
    a_shape = lax.shape_of(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    a = where(eye(a_shape[axis1], a_shape[axis2], k=offset, dtype=bool), a, zeros_like(a))
    return _sum(a, axis=(-2, -1), dtype=dtype)


trace = jit_named(_trace, "trace", ("axis1", "axis2", "dtype"))


def _diagonal(a, offset=0, axis1=0, axis2=1):
    a = _ensure("diagonal", a)
    if _ndim(a) < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    offset = operator.index(offset)

    def default_diag(a):
        a_shape = lax.shape_of(a)
        a = moveaxis(a, (axis1, axis2), (-2, -1))
        diag_size = max(0, min(a_shape[axis1] + min(offset, 0), a_shape[axis2] - max(offset, 0)))
        i = arange(diag_size)
        j = arange(abs(offset), abs(offset) + diag_size)
        return a[..., i, j] if offset >= 0 else a[..., j, i]

    shape, dtype = lax.shape_of(a), lax.dtype_of(a)
    # as JAX: a square non-bool matrix also has a masked-sum branch for Mosaic (whose
    # gather cannot take the diagonal), chosen when the program is lowered
    if shape[0] != shape[1] or len(shape) != 2 or offset != 0 or dtype == np.bool_:
        return default_diag(a)
    mask = eye(shape[0], dtype=dtype)

    def mosaic_diag(a):
        return lax.reduce(lax.mul(mask, a), np.array(0, dtype), lax.add, (0,))
    return lax.platform_dependent(a, default=default_diag, mosaic=mosaic_diag)


diagonal = jit_named(_diagonal, "diagonal", ("offset", "axis1", "axis2"))


# -- roll --------------------------------------------------------------------------------------

def _ensure_index_tuple(x):
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def _roll_dynamic_impl(a, shift, axis):
    b_shape = broadcast_shapes(lax.shape_of(shift), np.shape(axis))
    if len(b_shape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    shifts = broadcast_to(shift, b_shape)
    for n, i in enumerate(np.broadcast_to(axis, b_shape)):
        x = lax.index_in_dim(shifts, n, 0, keepdims=False)
        i = int(i)
        a_shape_i = array(lax.shape_of(a)[i], dtype=np.int32)
        x = remainder(lax.convert_element_type(x, np.int32), lax.max(a_shape_i, np.int32(1)))
        a_concat = lax.concatenate((a, a), i)
        a = lax.dynamic_slice_in_dim(a_concat, ufuncs["subtract"](a_shape_i, x),
                                     lax.shape_of(a)[i], axis=i)
    return a


def _roll_static_impl(a, shift, axis):
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        ax, s = int(ax), int(s)
        size = lax.shape_of(a)[ax]
        if size == 0:
            continue
        i = (-s) % size
        a = lax.concatenate([lax.slice_in_dim(a, i, size, axis=ax),
                             lax.slice_in_dim(a, 0, i, axis=ax)], ax)
    return a


_roll_dynamic_impl.__name__ = "_roll_dynamic"
_roll_static_impl.__name__ = "_roll_static"


def _jit_argnums(fn, argnums):
    return jit(fn, static_argnums=argnums)


_roll_dynamic = _jit_argnums(_roll_dynamic_impl, (2,))
_roll_static = _jit_argnums(_roll_static_impl, (1, 2))


def roll(a, shift, axis=None):
    """Elements of ``a`` rolled by ``shift`` along ``axis`` (the flattened array if None)."""
    arr = _ensure("roll", a)
    if axis is None:
        return roll(ravel(arr), shift, 0).reshape(lax.shape_of(arr))
    axis = _ensure_index_tuple(axis)
    axis = tuple(canonicalize_axis(ax, _ndim(arr)) for ax in axis)
    try:
        shift = _ensure_index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, asarray(shift), axis)
    return _roll_static(arr, shift, axis)


# -- tile, repeat ------------------------------------------------------------------------------

def tile(A, reps):
    """``A`` repeated ``reps`` times along each axis (the ``tile`` primitive)."""
    A = _ensure("tile", A)
    try:
        reps_tup = tuple(iter(reps))
    except TypeError:
        reps_tup = (reps,)
    reps_tup = tuple(operator.index(r) for r in reps_tup)
    reps_tup = (1,) * (_ndim(A) - len(reps_tup)) + reps_tup
    if len(reps_tup) > _ndim(A):
        A = lax.expand_dims(A, tuple(range(len(reps_tup) - _ndim(A))))
    return lax.tile(A, reps_tup)


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Each element of ``a`` repeated ``repeats`` times along ``axis`` (static repeats, or
    an array of repeats with ``total_repeat_length``)."""
    if isinstance(repeats, (int, np.integer)):
        check_arraylike("repeat", a)
    else:
        check_arraylike("repeat", a, repeats)
    a = asarray(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    return _repeat(repeats, a, axis=axis, total_repeat_length=total_repeat_length)


def _repeat(repeats, arr, *, axis, total_repeat_length=None):
    axis = operator.index(axis)
    if total_repeat_length is None:
        if isinstance(repeats, Tracer):
            repeats._concretization_error(
                "repeat", "When jit-compiling jnp.repeat, the total number of repeats must be "
                "static. To fix this, either specify a static value for `repeats`, or pass a "
                "static value to `total_repeat_length`.")
        if np.ndim(_host(repeats)) == 0 and _ndim(arr) != 0:
            input_shape = lax.shape_of(arr)
            axis = canonicalize_axis(axis, len(input_shape))
            aux_axis = axis + 1
            aux_shape = list(input_shape)
            r = operator.index(_host(repeats))
            aux_shape.insert(aux_axis, r)
            arr = lax.broadcast_in_dim(arr, tuple(aux_shape),
                                       tuple(i for i in range(len(aux_shape)) if i != aux_axis))
            result_shape = list(input_shape)
            result_shape[axis] *= r
            return arr.reshape(result_shape)
        repeats = np.ravel(_host(repeats))
        if _ndim(arr) != 0:
            repeats = np.broadcast_to(repeats, [lax.shape_of(arr)[axis]])
        total_repeat_length = int(np.sum(repeats))
    else:
        repeats = ravel(repeats)
        if _ndim(arr) != 0:
            repeats = broadcast_to(repeats, [lax.shape_of(arr)[axis]])
    if _ndim(arr) == 0:
        if np.shape(repeats) == (1,):
            return full([total_repeat_length], arr)
        raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar "
                         "values of the parameter `repeats`.")
    if total_repeat_length == 0:
        result_shape = list(lax.shape_of(arr))
        result_shape[axis] = 0
        return reshape(array([], dtype=lax.dtype_of(arr)), result_shape)
    if lax.shape_of(arr)[axis] == 0:
        return arr
    exclusive_repeats = roll(repeats, shift=1).at[0].set(0)
    scatter_indices = cumsum(exclusive_repeats)
    block_split_indicators = zeros([total_repeat_length], dtype="int32")
    block_split_indicators = block_split_indicators.at[scatter_indices].add(1)
    gather_indices = cumsum(block_split_indicators) - 1
    return take(arr, gather_indices, axis=axis)


def _host(x):
    if hasattr(x, "__traxla_array__") and not isinstance(x, Tracer):
        return np.asarray(x)
    return x


# -- meshgrid ----------------------------------------------------------------------------------

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from 1-D coordinate vectors (``indexing='xy'`` or ``'ij'``)."""
    check_arraylike("meshgrid", *xi)
    args = [lax._asarray(a) for a in xi]
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    if any(_ndim(a) != 1 for a in args):
        raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                         f"{[lax.shape_of(a) for a in args]}")
    if indexing == "xy" and len(args) >= 2:
        args[0], args[1] = args[1], args[0]
    shape = [1 if sparse else lax.shape_of(a)[0] for a in args]

    def a_shape(i, a):
        return [*shape[:i], lax.shape_of(a)[0], *shape[i + 1:]] if sparse else shape

    output = [lax._lift(lax.broadcast_in_dim(a, tuple(a_shape(i, a)), (i,)))
              for i, a in enumerate(args)]
    if indexing == "xy" and len(args) >= 2:
        output[0], output[1] = output[1], output[0]
    return output


# -- polyval -----------------------------------------------------------------------------------

def _polyval(p, x, *, unroll=16):
    p, x = ensure_arraylike("polyval", p, x)
    p_arr, x_arr = promote_dtypes(p, x)
    del p, x
    shape = broadcast_shapes(lax.shape_of(p_arr)[1:], lax.shape_of(x_arr))
    y = lax.full_like(x_arr, 0, shape=shape, dtype=lax.dtype_of(x_arr))
    y, _ = lax.scan(lambda y, p: (y * x_arr + p, None), y, p_arr, unroll=unroll)
    return y


polyval = jit_named(_polyval, "polyval", ("unroll",))
