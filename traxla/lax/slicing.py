"""``lax.gather`` and the scatter family, as ``jax.lax`` binds them: the gather mode is
canonicalized (``None`` -> ``PROMISE_IN_BOUNDS``, the fill value filled in for
``FILL_OR_DROP``), scatters carry their scalar combiner as a cached jaxpr
(``update_jaxpr``), shared between equations exactly as JAX's cached
``_reduction_jaxpr`` is."""
from __future__ import annotations

import weakref

import numpy as np

from traxla.api import jit
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.shape_poly import is_symbolic
from traxla.ir.rules.indexing import (GatherDimensionNumbers, GatherScatterMode, P as _I,
                                 ScatterDimensionNumbers)
from traxla.ir.rules.special import scatter_sub_p
from traxla.primitives.elementwise import (add as _add, bitwise_and, eq, lt, max as _max,
                                          min as _min, mul as _mul, ne, rem, select,
                                          sub as _sub)
from traxla.primitives.shapes import concatenate, expand_dims, full, full_like
from traxla.primitives.values import _const, _convert_element_type, aval_of, dtype_of, shape_of
from traxla.tracer import trace_to_jaxpr

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max",
           "scatter_apply", "index_take"]

gather_p = _I["gather"]
scatter_p, scatter_add_p, scatter_mul_p = _I["scatter"], _I["scatter-add"], _I["scatter-mul"]
scatter_min_p, scatter_max_p = _I["scatter-min"], _I["scatter-max"]

_reduction_jaxprs: dict = {}


def _reduction_jaxpr(computation, dtype):
    """JAX's cached ``_reduction_jaxpr``: the scalar combiner ``(x, y) -> computation(x, y)``
    traced once per (computation, dtype), so repeated scatters share one jaxpr object."""
    key = (computation, np.dtype(dtype))
    hit = _reduction_jaxprs.get(key)
    if hit is None:
        aval = ShapedArray((), np.dtype(dtype), False)
        closed = trace_to_jaxpr(lambda x, y: [computation(x, y)], [aval, aval])
        hit = _reduction_jaxprs[key] = (closed.jaxpr, tuple(closed.consts))
    return hit


def _default_fill_value(dtype):
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtypes.is_signed_int(dtype):
        return int(np.iinfo(dtype).min)
    if dtypes.is_unsigned_int(dtype):
        return int(np.iinfo(dtype).max)
    if dtypes.is_bool(dtype):
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """XLA's gather (``jax.lax.gather``): slices of ``operand`` at ``start_indices``."""
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError("gather: dimension_numbers must be a lax.GatherDimensionNumbers, got "
                        f"{type(dimension_numbers).__name__}")
    if mode is None:
        mode = GatherScatterMode.PROMISE_IN_BOUNDS
    parsed_mode = GatherScatterMode.from_any(mode)
    if parsed_mode == GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill_value(dtype_of(operand))
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dimension_numbers,
                         slice_sizes=tuple(s if is_symbolic(s) else int(s) for s in slice_sizes),
                         unique_indices=bool(unique_indices),
                         indices_are_sorted=bool(indices_are_sorted), mode=parsed_mode,
                         fill_value=fill_value)


def _scatter_with(prim, computation):
    def op(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        if not isinstance(dimension_numbers, ScatterDimensionNumbers):
            raise TypeError(f"{prim.name}: dimension_numbers must be a "
                            "lax.ScatterDimensionNumbers, got "
                            f"{type(dimension_numbers).__name__}")
        if computation is None:
            jaxpr, consts = None, ()
        else:
            jaxpr, consts = _reduction_jaxpr(computation, dtype_of(operand))
        return prim.bind(operand, scatter_indices, updates, update_jaxpr=jaxpr,
                         update_consts=consts, dimension_numbers=dimension_numbers,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=GatherScatterMode.from_any(mode))
    op.__name__ = prim.name.replace("-", "_")
    return op


scatter = _scatter_with(scatter_p, None)
scatter_add = _scatter_with(scatter_add_p, _add)
scatter_mul = _scatter_with(scatter_mul_p, _mul)
scatter_min = _scatter_with(scatter_min_p, _min)
scatter_max = _scatter_with(scatter_max_p, _max)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter_with(scatter_sub_p, _sub)(
        operand, scatter_indices, updates, dimension_numbers,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


_scatter_apply_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Scatter-apply: the elements of ``operand`` at ``scatter_indices`` are replaced with
    ``func`` of them (a duplicate index applies ``func`` again). As JAX, it binds ``scatter``
    with ``func`` as the update computation and placeholder updates of ``update_shape``; it
    cannot be differentiated."""
    unused = full(update_shape, 0, dtype_of(operand))
    apply = lambda x, _: func(x)  # noqa: E731
    try:
        apply = _scatter_apply_cache.setdefault(func, apply)
    except TypeError:  # func is not weakly referenceable
        pass
    jaxpr, consts = _reduction_jaxpr(apply, dtype_of(operand))
    return scatter_p.bind(operand, scatter_indices, unused, update_jaxpr=jaxpr,
                          update_consts=consts, dimension_numbers=dimension_numbers,
                          indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                          mode=GatherScatterMode.from_any(mode))


def _where(condition, x, y):
    return select(condition, x, y)


def _remainder(x1, x2):
    """``jnp.remainder`` of two integer arrays of one rank (Python's ``%``), binding what JAX's
    ``indices % max_idx`` binds: a ``jit`` named ``remainder`` around a ``jit`` named
    ``_where``."""
    dtype, _ = dtypes.result_type_of(*((dtype_of(x), aval_of(x).weak_type) for x in (x1, x2)))
    x1, x2 = (x if dtype_of(x) == dtype else _convert_element_type(x, dtype, False)
              for x in (x1, x2))
    zero = _const(x1, 0)
    x2 = _where_jit(eq(x2, zero), full_like(x2, 1), x2)
    trunc_mod = rem(x1, x2)
    trunc_mod_not_zero = ne(trunc_mod, zero)
    do_plus = bitwise_and(ne(lt(trunc_mod, zero), lt(x2, zero)), trunc_mod_not_zero)
    return select(do_plus, _add(trunc_mod, x2), trunc_mod)


_remainder.__name__ = "remainder"
_where_jit, _remainder_jit = jit(_where), jit(_remainder)


def index_take(src, idxs, axes):
    """``src`` at the integer indices ``idxs`` along ``axes`` (taken modulo the sizes)."""
    indices = concatenate([expand_dims(i, (1,)) for i in idxs], 1)
    shape = shape_of(src)
    max_idx = expand_dims(np.array([shape[ax] for ax in axes]),
                          tuple(range(len(shape_of(indices)) - 1)))
    indices = _remainder_jit(indices, max_idx)
    slice_sizes = list(shape)
    for ax in axes:
        slice_sizes[ax] = 1
    offset_dims = tuple(range(1, len(shape) - shape_of(indices)[1] + 1))
    dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(axes),
                                   start_index_map=tuple(axes))
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=tuple(slice_sizes))
