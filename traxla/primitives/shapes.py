"""``traxla.lax``'s shape operations: broadcasting, reshaping, static and dynamic slicing,
iotas and the arrays built from them, and filled arrays."""
from __future__ import annotations

import builtins
import operator

import numpy as np

import functools

from traxla.ir import dtypes
from traxla.ir.jaxpr import Var as _Var
from traxla.ir.rules.random import random_unwrap_p, random_wrap_p
from traxla.ir.rules.shape import (broadcast_in_dim_p, concatenate_p, dynamic_slice_p,
                              dynamic_update_slice_p, iota_p, pad_p, reshape_p, rev_p, slice_p,
                              squeeze_p, transpose_p)
from traxla.ir.shape_poly import DimExpr, int_dtype_for_shape
from traxla.tracer import Tracer, staging as _staging
from traxla.runtime import ArrayImpl
from traxla.runtime.placement import NamedSharding, device_put_placed
from traxla.primitives.values import (_const, _convert_element_type, convert_element_type, _is_array, _lift, asarray, aval_of, dtype_of,
                    shape_of)
from traxla.primitives.elementwise import add, bitwise_and, eq, ge, lt, select
from traxla.ir.rules.shape import split_p, stack_p, unstack_p


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
    shape = tuple(_concrete_shape(shape))
    aval = aval_of(operand)
    # An identity on a tracer is bound, as in JAX: staging drops it (the forwarding rule
    # below), but a trace that records it (linear_transpose's) transposes it to a
    # reduce_sum over no axes. On a concrete array it is the array itself.
    # JAX hands an array (a tracer too) back when there is nothing to broadcast (rank 0 to
    # rank 0); a Python scalar is bound (eagerly: an Array of its weak dtype).
    if len(aval.shape) == len(shape) and not len(broadcast_dimensions) and _is_array(operand):
        return operand
    if (aval.shape == shape and tuple(broadcast_dimensions) == tuple(range(len(shape)))
            and not isinstance(operand, (Tracer, builtins.int, builtins.float, builtins.complex))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape,
                                   broadcast_dimensions=tuple(broadcast_dimensions), sharding=None)


def _broadcast_in_dim_forwarding(eqn):
    operand = eqn.invars[0]
    if (isinstance(operand, _Var) and eqn.params["shape"] == operand.aval.shape
            and eqn.params["sharding"] in (None, operand.aval.sharding_type)):
        return [0], None
    return [None], eqn


_staging.forwarding_rules[broadcast_in_dim_p] = _broadcast_in_dim_forwarding


def broadcast(operand, sizes):
    if len(sizes) == 0:
        return _lift(asarray(operand))
    nd = len(shape_of(operand))
    return broadcast_in_dim(operand, tuple(sizes) + shape_of(operand),
                            tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to(arr, shape):
    """NumPy-style broadcast of ``arr`` to ``shape`` as one ``broadcast_in_dim``
    (size-1 dimensions stretch in place)."""
    src = shape_of(arr)
    shape = tuple(_concrete_shape(shape))
    if src == shape:
        return _lift(asarray(arr))
    nlead = len(shape) - len(src)
    if nlead < 0 or builtins.any(s not in (1, d) for s, d in zip(src, shape[nlead:])):
        raise ValueError(f"Incompatible shapes for broadcasting: {src} and requested shape {shape}")
    return broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def broadcast_to_rank(x, rank):
    nd = len(shape_of(x))
    return _lift(asarray(x)) if nd == rank else broadcast(x, (1,) * (rank - nd))


def _concrete_shape(shape):
    """A user's shape as a list of Python ints (JAX's ``canonicalize_shape``): every entry
    must be an integer (``operator.index``), concrete when traced; else JAX's TypeError."""
    t = type(shape)
    if t is tuple or t is list:  # the common case: Python ints, as they are
        for d in shape:
            if type(d) is not builtins.int:
                break
        else:
            return list(shape)
    if isinstance(shape, (builtins.int, np.integer)):
        shape = (shape,)
    try:
        entries = list(shape)
    except TypeError:
        entries = None
    out = []
    for d in entries or ():
        if isinstance(d, Tracer) and d.to_concrete_value() is None:
            raise TypeError(
                f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(shape)}.\n"
                "If using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."
                f"{d._origin_msg()}")
        if isinstance(d, DimExpr):  # export's symbolic dimensions stay symbolic
            out.append(d)
            continue
        try:
            out.append(operator.index(d))
        except TypeError:
            entries = None
            break
    if entries is None:
        shown = tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{shown}.")
    return out


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
    new_sizes = tuple(_concrete_shape((new_sizes,) if isinstance(new_sizes, int) else new_sizes))
    if dimensions is not None:  # Python ints, as JAX's _ensure_index_tuple (they print as such)
        dimensions = tuple(operator.index(d) for d in dimensions)
    same_dims = dimensions is None or dimensions == tuple(range(len(shape_of(operand))))
    if shape_of(operand) and shape_of(operand) == new_sizes and same_dims and _is_array(operand):
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes,
                          dimensions=None if same_dims else tuple(dimensions), sharding=None)


def _canonicalize_axis(axis, ndim):
    """JAX's ``util.canonicalize_axis``: an axis in [-ndim, ndim), else ValueError."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def squeeze(array, dimensions):
    nd = len(shape_of(array))
    dims = tuple(sorted(_canonicalize_axis(d, nd) for d in dimensions))
    if not dims and _is_array(array):
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
    shape = list(shape_of(array))
    ndim_out = len(shape) + len(dimensions)
    dims = [_canonicalize_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):  # again after canonicalizing, as JAX
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    dims = sorted(dims)
    for d in dims:
        shape.insert(d, 1)
    kept = tuple(i for i in range(ndim_out) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


def transpose(operand, permutation):
    permutation = tuple(operator.index(p) for p in permutation)
    # as JAX: only an array with the identity permutation of its own rank is handed back (a
    # shorter or longer "identity" goes to the typing rule; a Python scalar is bound)
    if permutation == tuple(range(len(shape_of(operand)))) and _is_array(operand):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def rev(operand, dimensions):
    return rev_p.bind(operand, dimensions=tuple(dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    return pad_p.bind(operand, padding_value,
                      # kept as given (NumPy integers print as np.int64(...), as in JAX)
                      padding_config=tuple(tuple(c) for c in padding_config))


def _int_or_dim(i):
    return i if isinstance(i, DimExpr) else int(i)


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    return slice_p.bind(operand, start_indices=tuple(_int_or_dim(i) for i in start_indices),
                        limit_indices=tuple(_int_or_dim(i) for i in limit_indices),
                        strides=None if strides is None else tuple(int(s) for s in strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    shape = shape_of(operand)
    start = [0] * len(shape)
    limit = list(shape)
    strides = [1] * len(shape)
    size = shape[axis]
    start_index = 0 if start_index is None else start_index
    limit_index = size if limit_index is None else limit_index
    start[axis] = start_index + size if start_index < 0 else start_index
    limit[axis] = limit_index + size if limit_index < 0 else limit_index
    strides[axis] = int(stride)
    return slice(operand, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    size = shape_of(operand)[axis]
    index = index + size if index < 0 else index
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def _dynamic_indices(operand, start_indices, allow_negative_indices=True):
    """Normalizes start indices as JAX does: static negative indices count from the
    end; traced (or array) indices get ``select(i < 0, i + d, i)``."""
    shape = shape_of(operand)
    if len(start_indices) != len(shape):
        raise ValueError(f"Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shape})")
    if isinstance(allow_negative_indices, builtins.bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    out = []
    for i, d, allow in zip(start_indices, shape, allow_negative_indices):
        is_py = isinstance(i, (builtins.int, np.integer)) and not isinstance(i, (builtins.bool, np.bool_))
        dt = dtypes.canonicalize(np.asarray(i).dtype) if is_py else dtype_of(i)
        if dtypes.is_unsigned_int(dt):
            out.append(i)
        elif is_py:
            if i < 0 and not allow:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            out.append(_convert_element_type(i + d if i < 0 else i, dt, False))
        elif allow:
            d_arr = _convert_element_type(d, dt, False)
            is_neg = lt(i, _convert_element_type(0, dt, False))
            # JAX writes ``i + d``: NumPy promotion makes a weak index strong first
            strong = _convert_element_type(i, dt, False) if aval_of(i).weak_type else i
            out.append(select(is_neg, add(strong, d_arr), i))
        else:
            out.append(i)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    idx = _dynamic_indices(operand, list(start_indices), allow_negative_indices)
    return dynamic_slice_p.bind(operand, *idx, slice_sizes=tuple(_concrete_shape(slice_sizes)))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    idx = _dynamic_indices(operand, list(start_indices), allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    shape = shape_of(operand)
    axis = int(axis)
    starts = [_const(start_index, 0)] * len(shape)
    starts[axis] = start_index
    allow = [False] * len(shape)
    allow[axis] = allow_negative_indices
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def _dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    axis = int(axis)
    nd = len(shape_of(operand))
    starts = [_const(start_index, 0)] * nd
    starts[axis] = start_index
    allow = [False] * nd
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def _dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    axis = int(axis)
    if len(shape_of(update)) != len(shape_of(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    return iota_p.bind(dtype=dtypes.to_dtype(dtype), shape=tuple(_concrete_shape(shape)),
                       dimension=int(dimension), sharding=None)


# -- filled arrays ---------------------------------------------------------------

def full(shape, fill_value, dtype=None):
    shape = tuple(_concrete_shape((shape,) if isinstance(shape, (builtins.int, np.integer)) else shape))
    if np.shape(fill_value) if not hasattr(fill_value, "aval") else aval_of(fill_value).shape:
        raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                        f"{shape_of(fill_value)}.")
    if dtype is None:
        weak = aval_of(fill_value).weak_type
        dt = dtype_of(fill_value)
    elif dtypes.is_extended(dtype):
        return _full_extended(shape, fill_value, dtype)
    else:
        weak, dt = False, dtypes.to_dtype(dtype)
    return _lift(broadcast(_convert_element_type(fill_value, dt, weak), shape))


def full_like(x, fill_value, dtype=None, shape=None):
    fill_shape = shape_of(x) if shape is None else shape
    weak = dtype is None and aval_of(x).weak_type
    dt = dtype_of(x) if dtype is None else dtypes.to_dtype(dtype)
    if dtypes.is_extended(dt):
        return _full_extended(tuple(fill_shape), fill_value, dt)
    out = full(fill_shape, _convert_element_type(fill_value, dt, weak))
    placement = getattr(x, "_placement", None)
    if (type(placement) is NamedSharding and type(out) is ArrayImpl and not weak
            and (tuple(fill_shape) == shape_of(x) or placement.is_fully_replicated)):
        # as JAX's: an Array laid out on a mesh gives its layout to the result (optimizer
        # states made with zeros_like sit where the parameters do)
        out = device_put_placed(np.asarray(out), out.aval, placement)
    return out


def _full_extended(shape, fill_value, dtype):
    """``full`` of an extended dtype: its type rules' ``full`` (a library's dtype, as in
    JAX), or key data filled and wrapped."""
    rules = getattr(dtype, "_rules", None)
    if rules is not None:
        return rules.full(tuple(shape), fill_value, dtype)
    return _full_keys(shape, fill_value, dtype)


def _full_keys(shape, fill_value, dtype):
    """JAX's ``KeyTyRules.full``: key data of ``shape`` filled with ``fill_value`` (a key's
    data, broadcast, when it is a key), wrapped as keys of ``dtype``."""
    physical_shape = (*shape, *dtype.physical_shape)
    if dtypes.is_extended(getattr(aval_of(fill_value), "dtype", None)):
        data = random_unwrap_p.bind(fill_value)
        data = broadcast_in_dim(data, physical_shape, range(len(physical_shape) - len(
            shape_of(data)), len(physical_shape)))
    else:
        data = full(physical_shape, fill_value, dtype.physical_dtype)
    return random_wrap_p.bind(data, impl=dtype.impl)


def _zero(x):
    return _convert_element_type(0, dtype_of(x), aval_of(x).weak_type)


def _one(x):
    return _convert_element_type(1, dtype_of(x), aval_of(x).weak_type)


def zeros_like_array(x):
    return full_like(x, 0)


def _zeros(x):
    return full_like(x, 0)


def _ones(x):
    return full_like(x, 1)


# -- masks built from iotas, and splitting/stacking ------------------------------

def _tri(dtype, shape, offset):
    """``numpy.tri``'s mask: ``iota0 + offset >= iota1``, converted to ``dtype``."""
    offset = asarray(offset)
    if not dtypes.is_int(dtype_of(offset)):
        raise TypeError(f"offset must be an integer, got {offset!r}")
    shape_dtype = int_dtype_for_shape(shape, signed=True)
    info = np.iinfo(dtype_of(offset))
    if info.min < np.iinfo(shape_dtype).min or info.max > np.iinfo(shape_dtype).max:
        shape_dtype = dtypes.int64
    bool_tri = ge(add(broadcasted_iota(shape_dtype, shape, 0),
                      _convert_element_type(offset, shape_dtype, False)),
                  broadcasted_iota(shape_dtype, shape, 1))
    return _convert_element_type(bool_tri, dtypes.to_dtype(dtype), False)


def _delta(dtype, shape, axes):
    """A Kronecker delta over ``axes`` of ``shape`` (JAX's ``lax._delta``)."""
    axes = [int(a) for a in axes]
    base_shape = tuple(shape[a] for a in axes)
    iotas = [broadcasted_iota(np.uint32, base_shape, i) for i in range(len(base_shape))]
    eyes = [eq(i1, i2) for i1, i2 in zip(iotas[:-1], iotas[1:])]
    result = _convert_element_type(functools.reduce(bitwise_and, eyes), dtypes.to_dtype(dtype),
                                   False)
    return broadcast_in_dim(result, tuple(shape), tuple(axes))


def split(operand, sizes, axis=0):
    """Pieces of ``operand`` along ``axis`` with the given sizes (the ``split`` primitive)."""
    ndim = len(shape_of(operand))
    return split_p.bind(operand, sizes=tuple(sizes), axis=int(axis) % (ndim or 1))


def _stack(operands, axis=0):
    ndim = len(shape_of(operands[0])) + 1
    return stack_p.bind(*operands, axis=int(axis) % ndim)


def _unstack(operand, axis=0):
    ndim = len(shape_of(operand))
    return unstack_p.bind(operand, axis=int(axis) % ndim)


def _eye(N, M, k, dtype):
    """``jnp.eye``'s equations: ``iota(rows) + k == iota(cols)``, converted to ``dtype``."""
    rows = broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = broadcasted_iota(dtypes.int32, (N, M), 1)
    return convert_element_type(eq(add(rows, _convert_element_type(k, dtypes.int32, False)), cols),
                                 dtype)
