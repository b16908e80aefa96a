"""Array manipulation of ``jax.numpy``: differences (``diff``, ``ediff1d``, ``gradient``,
``unwrap``, ``trapezoid``), insertion and deletion (``append``, ``insert``, ``delete``,
``resize``, ``trim_zeros``), rotation and stacking (``rot90``, ``fliplr``/``flipud``,
``rollaxis``, ``block``, ``column_stack``, ``dstack``, ``*split``, ``atleast_3d``),
diagonals (``diag``, ``diagflat``, ``fill_diagonal``), products (``kron``, ``cross``,
``vander``), ``interp`` and comparisons (``isclose``, ``allclose``, ``array_equal``,
``array_equiv``), each binding what ``jax.numpy`` binds where it is practical."""
from __future__ import annotations

import math
import operator

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import (check_arraylike, ensure_arraylike, promote_args, promote_args_inexact,
                         promote_dtypes, promote_dtypes_inexact)
from traxla.numpy._shape import (concatenate, moveaxis, ravel, reshape, transpose, broadcast_to,
                                 flip, atleast_2d, _split, expand_dims)
from traxla.numpy._ufuncs import clip, where, ufuncs, remainder, abs as _abs, power
from traxla.numpy._reductions import cumsum, all as _all
from traxla.numpy._creation import asarray, arange, array, full, ones, zeros_like, eye, zeros
from traxla.numpy._sorting import sort, argsort
import traxla.numpy._searching as _numpy__searching
from traxla.numpy._promotion import broadcast_shapes
from traxla.numpy._diagonals_tiles import tile, diagonal
from traxla.batching import vmap
from traxla.numpy._index_tricks import diag_indices


def _canon(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


# -- differences ------------------------------------------------------------------------------

def _diff(a, n=1, axis=-1, prepend=None, append=None):
    arr = ensure_arraylike("diff", a)
    n, axis = operator.index(n), operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    nd = arr.ndim
    axis = _canon(axis, nd)
    combined = []
    for extra, first in ((prepend, True), (None, None), (append, False)):
        if first is None:
            combined.append(arr)
            continue
        if extra is None:
            continue
        extra = ensure_arraylike("diff", extra)
        if not np.ndim(extra):
            shape = list(arr.shape)
            shape[axis] = 1
            extra = broadcast_to(extra, tuple(shape))
        combined.append(extra)
    if len(combined) > 1:
        arr = concatenate(combined, axis)
    slice1, slice2 = [slice(None)] * nd, [slice(None)] * nd
    slice1[axis], slice2[axis] = slice(1, None), slice(None, -1)
    op = operator.ne if arr.dtype == np.bool_ else operator.sub
    for _ in range(n):
        arr = op(arr[tuple(slice1)], arr[tuple(slice2)])
    return arr


diff = jit_named(_diff, "diff", ("n", "axis"))


def _ediff1d(ary, to_end=None, to_begin=None):
    arr = ensure_arraylike("ediff1d", ary).ravel()
    result = lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        to_begin = ensure_arraylike("ediff1d", to_begin)
        result = concatenate((ravel(to_begin.astype(arr.dtype)), result))
    if to_end is not None:
        to_end = ensure_arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(to_end.astype(arr.dtype))))
    return result


ediff1d = jit_named(_ediff1d, "ediff1d")


def _gradient(f, *varargs, axis=None, edge_order=None):
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promote_dtypes_inexact(f, *varargs)

    def along(a, h, axis):
        def sliced(start, stop):
            return lax.slice_in_dim(a, start, stop, axis=axis)
        upper_edge = sliced(1, 2) - sliced(0, 1)
        lower_edge = sliced(-1, None) - sliced(-2, -1)
        if np.ndim(h) == 0:
            inner = (sliced(2, None) - sliced(None, -2)) * 0.5 / h
            lower_edge /= h
            upper_edge /= h
        elif np.ndim(h) == 1:
            if len(h) != a.shape[axis]:
                raise ValueError("Spacing arrays must have the same length as the dimension "
                                 "along which the gradient is calculated.")
            h_shape = [1] * a.ndim
            h_shape[axis] = len(h)
            h = h.reshape(h_shape)

            def sx(start, stop):
                return lax.slice_in_dim(h, start, stop, axis=axis)
            upper_edge /= sx(1, 2) - sx(0, 1)
            lower_edge /= sx(-1, None) - sx(-2, -1)
            dx1 = sx(1, -1) - sx(0, -2)
            dx2 = sx(2, None) - sx(1, -1)
            ca = -dx2 / (dx1 * (dx1 + dx2))
            cb = (dx2 - dx1) / (dx1 * dx2)
            cc = dx1 / (dx2 * (dx1 + dx2))
            inner = ca * sliced(0, -2) + cb * sliced(1, -1) + cc * sliced(2, None)
        else:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        return concatenate((upper_edge, inner, lower_edge), axis=axis)

    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(_canon(i, a.ndim) for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(axes) == 0:
        return []
    if min(s for i, s in enumerate(a.shape) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "2 elements are required.")
    if len(spacing) == 0:
        dx = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [along(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


gradient = jit_named(_gradient, "gradient", ("axis", "edge_order"))


def _unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    p = ensure_arraylike("unwrap", p)
    p, period = (lax._lift(v) for v in promote_dtypes(p, period))
    if dtypes.is_complex(p.dtype):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if dtypes.is_int(p.dtype) else period / 2
    dd = diff(p, axis=axis)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    ph_correct = where(_abs(dd) < discont, 0, ddmod - dd)
    return concatenate((lax.slice_in_dim(p, 0, 1, axis=axis),
                        lax.slice_in_dim(p, 1, None, axis=axis) + cumsum(ph_correct, axis=axis)),
                       axis=axis)


unwrap = jit_named(_unwrap, "unwrap", ("axis",))


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    if x is None:
        y = ensure_arraylike("trapezoid", y)
        y_arr, = promote_dtypes_inexact(y)
        dx_array = asarray(dx)
        if dx_array.ndim > 0:
            dx_array = lax.expand_dims(dx_array, range(y_arr.ndim - dx_array.ndim))
            dx_array = moveaxis(dx_array, axis, -1)
    else:
        y, x = ensure_arraylike("trapezoid", y, x)
        y_arr, x_arr = promote_dtypes_inexact(y, x)
        dx_array = diff(x_arr) if x_arr.ndim == 1 else moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = moveaxis(y_arr, axis, -1)
    if dx_array.ndim == 0 or dx_array.shape[-1] == 1:
        dx_reduced = dx_array if dx_array.ndim == 0 else dx_array[..., 0]
        return dx_reduced * (y_arr.sum(-1) - 0.5 * (y_arr[..., 0] + y_arr[..., -1]))
    return 0.5 * (dx_array * (y_arr[..., 1:] + y_arr[..., :-1])).sum(-1)


trapezoid = jit_named(_trapezoid, "trapezoid", ("axis",))


# -- insertion, deletion ----------------------------------------------------------------------

def _append(arr, values, axis=None):
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


append = jit_named(_append, "append", ("axis",))


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (int, slice, index or mask array) along ``axis``."""
    a = ensure_arraylike("delete", arr)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = _canon(axis, a.ndim)
    try:
        obj = operator.index(obj)
        obj = _canon(obj, a.shape[axis])
    except TypeError:
        pass
    else:
        idx = tuple(slice(None) for _ in range(axis))
        return concatenate([a[idx + (slice(0, obj),)], a[idx + (slice(obj + 1, None),)]], axis=axis)
    if isinstance(obj, slice):
        obj = arange(a.shape[axis])[obj]
        assume_unique_indices = True
    check_arraylike("delete", a, obj)
    obj_dtype = np.asarray(obj).dtype if not hasattr(obj, "aval") else obj.aval.dtype
    if dtypes.is_int(obj_dtype) and assume_unique_indices:
        obj_array = asarray(obj).ravel()
        obj_array = clip(where(obj_array < 0, obj_array + a.shape[axis], obj_array), 0,
                         a.shape[axis])
        obj_array = sort(obj_array)
        obj_array -= arange(len(obj_array), dtype=obj_array.dtype)
        i = arange(a.shape[axis] - obj_array.size, dtype=obj_array.dtype)
        i += (i[None, :] >= obj_array[:, None]).sum(0, dtype=i.dtype)
        return a[(slice(None),) * axis + (i,)]
    obj_array = _numpy__searching.concrete_or_error(obj, "'obj' array argument of jnp.delete()")
    if np.issubdtype(obj_array.dtype, np.integer):
        mask = np.ones(a.shape[axis], dtype=bool)
        mask[obj_array] = False
    elif obj_array.dtype == bool:
        if obj_array.shape != (a.shape[axis],):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        mask = ~obj_array
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={obj_array.dtype}; must be integer "
                         "or bool.")
    return a[tuple(slice(None) for _ in range(axis)) + (mask,)]


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``."""
    a, _, values_arr = ensure_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _canon(axis, a.ndim)
    indices = arange(*obj.indices(a.shape[axis])) if isinstance(obj, slice) else asarray(obj)
    if indices.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.is_int(indices.dtype):
        if indices.size == 0 and not hasattr(obj, "aval"):
            indices = indices.astype(int)
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    values_arr = array(values_arr, ndmin=a.ndim, dtype=a.dtype, copy=False)
    if indices.size == 1:
        index = ravel(indices)[0]
        if indices.ndim == 0:
            values_arr = moveaxis(values_arr, 0, axis)
        indices = full(values_arr.shape[axis], index)
    n_input = a.shape[axis]
    n_insert = broadcast_shapes(indices.shape, (values_arr.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    out = zeros_like(a, shape=tuple(out_shape))
    indices = where(indices < 0, indices + n_input, indices)
    indices = clip(indices, 0, n_input)
    values_ind = indices.at[argsort(indices)].add(arange(n_insert, dtype=indices.dtype))
    arr_mask = ones(n_input + n_insert, dtype=bool).at[values_ind].set(False)
    arr_ind = where(arr_mask, size=n_input)[0]
    out = out.at[(slice(None),) * axis + (values_ind,)].set(values_arr)
    return out.at[(slice(None),) * axis + (arr_ind,)].set(a)


def _resize(a, new_shape):
    check_arraylike("resize", a)
    new_shape = tuple(operator.index(d) for d in (new_shape if isinstance(new_shape, (tuple, list))
                                                  else (new_shape,)))
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if arr.size == 0 or new_size == 0:
        return zeros_like(arr, shape=new_shape)
    repeats = -(-new_size // arr.size)
    return reshape(tile(arr, repeats)[:new_size], new_shape)


_resize_jit = jit_named(_resize, "resize", ("new_shape",))


def resize(a, new_shape):
    if isinstance(new_shape, list):
        new_shape = tuple(new_shape)
    return _resize_jit(a, new_shape)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without leading (``f``) and/or trailing (``b``) zeros (concrete input)."""
    filt = ensure_arraylike("trim_zeros", filt)
    data = _numpy__searching.concrete_or_error(filt, "Error arose in the `filt` argument of trim_zeros()")
    axes = range(filt.ndim) if axis is None else [
        _canon(x, filt.ndim) for x in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    axis_set = set(axes)
    if not axis_set or ("f" not in trim.lower() and "b" not in trim.lower()):
        return filt

    def get_slice(ax):
        if ax not in axis_set:
            return slice(None)
        mask = data.any(axis=tuple(i for i in range(data.ndim) if i != ax))
        if not mask.any():
            return slice(0, 0)
        start = int(mask.argmax()) if "f" in trim.lower() else None
        stop = data.shape[ax] - int(mask[::-1].argmax()) if "b" in trim.lower() else None
        return slice(start, stop)
    return filt[tuple(get_slice(ax) for ax in range(filt.ndim))]


# -- rotation, stacking, splitting ------------------------------------------------------------

def _rot90(m, k=1, axes=(0, 1)):
    m = ensure_arraylike("rot90", m)
    if np.ndim(m) < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                         f"first argument of shape {np.shape(m)}, which has ndim {np.ndim(m)}")
    ax1, ax2 = (_canon(x, np.ndim(m)) for x in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = k % 4
    if k == 0:
        return asarray(m)
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(np.ndim(m)))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


rot90 = jit_named(_rot90, "rot90", ("k", "axes"))


def fliplr(m):
    arr = ensure_arraylike("fliplr", m)
    return flip(arr, 1)


def flipud(m):
    arr = ensure_arraylike("flipud", m)
    return flip(arr, 0)


def _rollaxis(a, axis, start=0):
    a = ensure_arraylike("rollaxis", a)
    start = operator.index(start)
    a_ndim = np.ndim(a)
    axis = _canon(axis, a_ndim)
    if not -a_ndim <= start <= a_ndim:
        raise ValueError(f"start={start} must satisfy {-a_ndim}<=start<={a_ndim}")
    if start < 0:
        start += a_ndim
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


rollaxis = jit_named(_rollaxis, "rollaxis", ("axis", "start"))


def _atleast_3d_one(a):
    a = asarray(a)
    if a.ndim == 0:
        return lax.expand_dims(a, (0, 1, 2))
    if a.ndim == 1:
        return lax.expand_dims(a, (0, 2))
    if a.ndim == 2:
        return lax.expand_dims(a, (2,))
    return a


def _atleast_3d(*arys):
    check_arraylike("atleast_3d", *arys)
    if len(arys) == 1:
        return _atleast_3d_one(arys[0])
    return [_atleast_3d_one(a) for a in arys]


atleast_3d = jit_named(_atleast_3d, "atleast_3d")


def _atleast_nd(x, n):
    m = np.ndim(x)
    return lax.broadcast(x, (1,) * (n - m)) if m < n else asarray(x)


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts = [_block(x) for x in xs]
        xs_tup, depths = [p[0] for p in parts], [p[1] for p in parts]
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = max(depths[0], max(np.ndim(x) for x in xs_tup))
        xs_tup = tuple(_atleast_nd(x, rank) for x in xs_tup)
        return concatenate(xs_tup, axis=-depths[0]), depths[0] + 1
    return asarray(xs), 1


def _block_fn(arrays):
    return _block(arrays)[0]


block = jit_named(_block_fn, "block")


def column_stack(tup):
    if isinstance(tup, np.ndarray) or hasattr(tup, "aval"):
        arrs = vmap(lambda x: atleast_2d(x).T)(tup) if tup.ndim < 3 else tup
    else:
        check_arraylike("column_stack", *tup)
        arrs = [atleast_2d(a).T if a.ndim < 2 else a for a in map(asarray, tup)]
    return concatenate(arrs, axis=1)


def dstack(tup, dtype=None):
    if isinstance(tup, np.ndarray) or hasattr(tup, "aval"):
        arrs = vmap(atleast_3d)(tup)
    else:
        check_arraylike("dstack", *tup)
        arrs = [atleast_3d(m) for m in tup]
    return concatenate(arrs, axis=2, dtype=dtype)


def hsplit(ary, indices_or_sections):
    a = ensure_arraylike("hsplit", ary)
    return _split("hsplit", a, indices_or_sections, axis=0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    return _split("vsplit", ensure_arraylike("vsplit", ary), indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return _split("dsplit", ensure_arraylike("dsplit", ary), indices_or_sections, axis=2)


# -- diagonals ------------------------------------------------------------------------------

def _diag_impl(v, k):
    v_shape = np.shape(v)
    if len(v_shape) == 1:
        def zero(x):
            return lax.full_like(x, shape=(), fill_value=0)
        n = v_shape[0] + abs(k)
        v = lax.pad(v, zero(v), ((max(0, -k), max(0, k), 0),))
        return where(eye(n, k=k, dtype=bool), v[:, None], zero(v))
    if len(v_shape) == 2:
        return diagonal(v, offset=k)
    raise ValueError("diag input must be 1d or 2d")


_diag = jit_named(_diag_impl, "_diag", ("k",))


def diag(v, k=0):
    v = ensure_arraylike("diag", v)
    return _diag(v, operator.index(k))


def diagflat(v, k=0):
    check_arraylike("diagflat", v)
    v_ravel = ravel(v)
    adj = len(v_ravel) + abs(k)
    res = zeros(adj * adj, dtype=v_ravel.dtype)
    i = arange(0, adj - abs(k))
    fi = i + k + i * adj if k >= 0 else i + (i - k) * adj
    return res.at[fi].set(v_ravel).reshape(adj, adj)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """``a`` with its main diagonal set to ``val`` (cycled); returns a new array."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    a, val = ensure_arraylike("fill_diagonal", a, val)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and not all(n == a.shape[0] for n in a.shape[1:]):
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = diag_indices(n, a.ndim)
    if val.ndim:
        flat = val.ravel()
        val = tile(flat, -(-n // flat.size))[:n] if flat.size < n else flat[:n]
    return a.at[idx].set(val)


# -- products -----------------------------------------------------------------------------------

def _kron(a, b):
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    if np.ndim(a) < np.ndim(b):
        a = expand_dims(a, range(np.ndim(b) - np.ndim(a)))
    elif np.ndim(b) < np.ndim(a):
        b = expand_dims(b, range(np.ndim(a) - np.ndim(b)))
    a_r = expand_dims(a, range(1, 2 * np.ndim(a), 2))
    b_r = expand_dims(b, range(0, 2 * np.ndim(b), 2))
    out_shape = tuple(np.multiply(np.shape(a), np.shape(b)))
    return reshape(lax.mul(a_r, b_r), out_shape)


kron = jit_named(_kron, "kron")


def _vander(x, N=None, increasing=False):
    x = ensure_arraylike("vander", x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    iota = lax.iota(x.dtype, N)
    if not increasing:
        iota = lax.sub(lax._const(iota, N - 1), iota)
    return power(x[..., None], expand_dims(iota, tuple(range(x.ndim))))


vander = jit_named(_vander, "vander", ("N", "increasing"))


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else zeros_like(a0)
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else zeros_like(b0)
    c = array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return moveaxis(c, 0, axisc)


cross = jit_named(_cross, "cross", ("axisa", "axisb", "axisc", "axis"))


# -- interp ---------------------------------------------------------------------------------------

def _interp(x, xp, fp, left=None, right=None, period=None):
    x, xp, fp = ensure_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = promote_dtypes_inexact(x, xp)
    fp_arr, = promote_dtypes_inexact(fp)
    extrapolate = []
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but "
                             f"got: {side!r}")
        extrapolate.append(isinstance(side, str))
    if dtypes.is_complex(x_arr.dtype):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = _abs(period)
        x_arr, xp_arr = x_arr % period, xp_arr % period
        xp_arr, fp_arr = lax.sort_key_val(xp_arr, fp_arr)
        xp_arr = concatenate([xp_arr[-1:] - period, xp_arr, xp_arr[:1] + period])
        fp_arr = concatenate([fp_arr[-1:], fp_arr, fp_arr[:1]])
    i = clip(_numpy__searching.searchsorted(xp_arr, x_arr, side="right"), 1, len(xp_arr) - 1)
    df = fp_arr[i] - fp_arr[i - 1]
    dx = xp_arr[i] - xp_arr[i - 1]
    delta = x_arr - xp_arr[i - 1]
    epsilon = np.spacing(np.finfo(xp_arr.dtype).eps)
    dx0 = lax.abs(dx) <= epsilon
    f = where(dx0, fp_arr[i - 1], fp_arr[i - 1] + (delta / where(dx0, 1, dx)) * df)
    if not extrapolate[0]:
        left_arr = fp_arr[0] if left is None else left
        if period is None:
            f = where(x_arr < xp_arr[0], left_arr, f)
    if not extrapolate[1]:
        right_arr = fp_arr[-1] if right is None else right
        if period is None:
            f = where(x_arr > xp_arr[-1], right_arr, f)
    return f


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of ``(xp, fp)`` at ``x`` (``left``/``right`` may be
    values or ``'extrapolate'``; ``period`` wraps)."""
    static = []
    if isinstance(left, str) or left is None:
        static.append("left")
    if isinstance(right, str) or right is None:
        static.append("right")
    if period is None:
        static.append("period")
    return jit_named(_interp, "_interp", tuple(static))(x, xp, fp, left, right, period)


# -- comparisons ----------------------------------------------------------------------------------

def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = promote_args("isclose", a, b)
    if isinstance(lax.dtype_of(a), dtypes.ExtendedDType):  # keys: equal or not (as JAX's)
        return lax.eq(a, b)
    a, b = promote_args_inexact("isclose", a, b)
    dtype = lax.dtype_of(a)
    if dtypes.is_complex(dtype):
        dtype = np.array(0, dtype).real.dtype
    rtol = lax.convert_element_type(rtol, dtype)
    atol = lax.convert_element_type(atol, dtype)
    both_nan = ufuncs["logical_and"](ufuncs["isnan"](a), ufuncs["isnan"](b))
    check_fin = ufuncs["isfinite"](b)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = ufuncs["logical_or"](lax.eq(a, b), ufuncs["logical_and"](check_fin, in_range))
    return ufuncs["logical_or"](out, both_nan) if equal_nan else out


isclose = jit_named(_isclose, "isclose", ("equal_nan",))


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    check_arraylike("allclose", a, b)
    return _all(isclose(a, b, rtol, atol, equal_nan))


allclose = jit_named(_allclose, "allclose", ("equal_nan",))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if np.shape(a1) != np.shape(a2):
        return array(False, dtype=bool)
    eq = asarray(a1 == a2)
    if equal_nan:
        eq = ufuncs["logical_or"](eq, ufuncs["logical_and"](ufuncs["isnan"](a1),
                                                            ufuncs["isnan"](a2)))
    return _all(eq)


def array_equiv(a1, a2):
    a1, a2 = asarray(a1), asarray(a2)
    try:
        eq = ufuncs["equal"](a1, a2)
    except (ValueError, TypeError):
        return array(False)
    return _all(eq)
