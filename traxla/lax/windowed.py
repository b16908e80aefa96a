"""Windowed reductions and the generic reduction (JAX's lax/windowed_reductions.py and
``lax.reduce``): a monoid recognised from its function and identity binds the dedicated
primitive (``reduce_window_sum``, ``reduce_max``...); any other monoid is traced into a
scalar jaxpr carried by the generic ``reduce_window`` / ``reduce`` primitive."""
from __future__ import annotations

import functools

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.rules.elementwise import P as _E
from traxla.ir.rules.windowed import P as _W, reduce_window_shape
from traxla.ir.avals import ShapedArray
from traxla.ir.shape_poly import is_symbolic
from traxla.tracer import Tracer, make_debug_info, trace_to_jaxpr
from traxla.tracer.values import concrete_aval, concrete_value, is_concrete
from traxla.lax import (_convert_element_type, _reducer, add, aval_of, bitwise_and, bitwise_or,
               bitwise_xor, max as lax_max, min as lax_min, mul, reduce_sum)
from traxla.lax.convolution import padtype_to_pads
from traxla.lax.slicing import _reduction_jaxpr as _scalar_jaxpr
from traxla.ir.rules.conv import dilate_shape

reduce_window_sum_p = _W["reduce_window_sum"]
reduce_window_max_p = _W["reduce_window_max"]
reduce_window_min_p = _W["reduce_window_min"]
reduce_window_p = _W["reduce_window"]
reduce_p = _W["reduce"]
select_and_scatter_add_p = _W["select_and_scatter_add"]
select_and_gather_add_p = _W["select_and_gather_add"]


def _identity(dtype, lowest: bool, what: str):
    """The identity of ``max`` (``lowest``: the lowest value of ``dtype``) or of ``min``."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.array(-np.inf if lowest else np.inf, dtype)
    if dtypes.is_int(dtype):
        info = np.iinfo(dtype)
        return np.array(info.min if lowest else info.max, dtype)
    if dtypes.is_bool(dtype):
        return np.array(not lowest, np.bool_)
    raise ValueError(f"Unsupported dtype for {what}: {dtype}")


def get_max_identity(dtype):
    return _identity(dtype, True, "max")


def get_min_identity(dtype):
    return _identity(dtype, False, "min")


def _aval(x):
    return aval_of(x) if isinstance(x, Tracer) else concrete_aval(x)


@functools.lru_cache(maxsize=256)
def _reduction_jaxpr(computation, flat_avals, aval_tree, traced_for):
    """``computation(xs, ys)`` traced on scalars into a closed jaxpr; its output tree."""
    avals = tree_util.tree_unflatten(aval_tree, list(flat_avals))
    flat_in, in_tree = tree_util.tree_flatten((avals, avals))
    out_trees = []

    def flat_computation(*flat_args):
        xs, ys = tree_util.tree_unflatten(in_tree, list(flat_args))
        out = computation(xs, ys)
        leaves, tree = tree_util.tree_flatten(out)
        out_trees.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat_computation, list(flat_in),
                            make_debug_info(computation, traced_for, ()))
    if any(isinstance(c, Tracer) for c in closed.consts):
        raise NotImplementedError("Reduction computations can't close over Tracers: pass the "
                                  "traced value as an operand of the reduction instead.")
    return closed, out_trees[0]


def _flatten_operands(operands, init_values, what):
    flat_operands, operand_tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    if len(flat_operands) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat_operands)} vs. {len(flat_inits)}")
    if not flat_operands:
        raise ValueError(f"{what} must have at least one operand.")
    return flat_operands, flat_inits, operand_tree


def _concrete_scalar(x):
    if isinstance(x, Tracer) or not is_concrete(x):
        return None
    if _aval(x).shape != ():
        return None
    return concrete_value(x)


# -- reduce_window ------------------------------------------------------------------------------

def _window_params(window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    return dict(window_dimensions=tuple(int(d) for d in window_dimensions),
                window_strides=tuple(int(d) for d in window_strides),
                padding=tuple((_dim(lo), _dim(hi)) for lo, hi in padding),
                base_dilation=tuple(int(d) for d in base_dilation),
                window_dilation=tuple(int(d) for d in window_dilation))


def _monoid_init(xs):
    """``(value, dtype)`` of a single concrete scalar initial value, else ``(None, None)``."""
    if len(xs) != 1:
        return None, None
    val = _concrete_scalar(xs[0])
    return (None, None) if val is None else (val, _aval(xs[0]).dtype)


def _get_monoid_window_reducer(monoid_op, xs):
    val, dtype = _monoid_init(xs)
    if val is None:
        return None
    if monoid_op is add:
        return _reduce_window_sum if val == 0 else None
    if monoid_op is lax_max:
        return _reduce_window_max if val == get_max_identity(dtype) else None
    if monoid_op is lax_min:
        return _reduce_window_min if val == get_min_identity(dtype) else None
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduction over padded, strided, dilated windows (XLA's ReduceWindow); ``operand`` and
    ``init_value`` may be matching pytrees."""
    flat_operands, flat_inits, operand_tree = _flatten_operands(operand, init_value,
                                                                "reduce_window")
    nd = len(window_dimensions)
    if isinstance(padding, str):
        dilated = (window_dimensions if window_dilation is None
                   else dilate_shape(window_dimensions, window_dilation))
        padding = tuple(padtype_to_pads(_aval(flat_operands[0]).shape, dilated,
                                        window_strides or [1] * nd, padding))
    else:
        padding = tuple((lo, hi) for lo, hi in padding)
    window_strides = (1,) * nd if window_strides is None else window_strides
    base_dilation = (1,) * nd if base_dilation is None else base_dilation
    window_dilation = (1,) * nd if window_dilation is None else window_dilation
    monoid = _get_monoid_window_reducer(computation, flat_inits)
    if monoid:
        return monoid(operand, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation)
    init_avals = tuple(_aval(v) for v in flat_inits)
    _, init_tree = tree_util.tree_flatten(init_value)
    closed, out_tree = _reduction_jaxpr(computation, init_avals, init_tree, "reduce_window comp")
    if operand_tree != out_tree:
        raise ValueError("reduce_window output must have the same tree structure as the "
                         f"operands {operand_tree} vs. {out_tree}")
    out = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=closed.jaxpr,
                               consts=tuple(closed.consts),
                               **_window_params(window_dimensions, window_strides, padding,
                                                base_dilation, window_dilation))
    return tree_util.tree_unflatten(out_tree, out)


def _window_bind(prim):
    def op(operand, window_dimensions, window_strides, padding, base_dilation=None,
           window_dilation=None):
        nd = len(window_dimensions)
        return prim.bind(operand, **_window_params(
            window_dimensions, window_strides, padding,
            (1,) * nd if base_dilation is None else base_dilation,
            (1,) * nd if window_dilation is None else window_dilation))
    op.__name__ = prim.name
    return op


_reduce_window_sum = reduce_window_sum = _window_bind(reduce_window_sum_p)
_reduce_window_max = reduce_window_max = _window_bind(reduce_window_max_p)
_reduce_window_min = reduce_window_min = _window_bind(reduce_window_min_p)


def _reduce_window_via_jaxpr(computation, init):
    def op(operand, window_dimensions, window_strides, padding, base_dilation=None,
           window_dilation=None):
        nd = len(window_dimensions)
        init_value = _convert_element_type(init, aval_of(operand).dtype, False)
        aval = ShapedArray((), aval_of(operand).dtype, False)
        closed, _ = _reduction_jaxpr(computation, (aval,), tree_util.tree_structure(0),
                                     "reduction_jaxpr")
        out, = reduce_window_p.bind(
            operand, init_value, jaxpr=closed.jaxpr, consts=tuple(closed.consts),
            **_window_params(window_dimensions, window_strides, padding,
                             (1,) * nd if base_dilation is None else base_dilation,
                             (1,) * nd if window_dilation is None else window_dilation))
        return out
    return op


_reduce_window_prod = _reduce_window_via_jaxpr(mul, 1)


def _select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                            padding):
    return select_and_scatter_add_p.bind(
        source, operand, select_prim=select_prim,
        window_dimensions=tuple(int(d) for d in window_dimensions),
        window_strides=tuple(int(d) for d in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding))


def _select_and_gather_add(tangents, operand, select_prim, window_dimensions, window_strides,
                           padding, base_dilation, window_dilation):
    return select_and_gather_add_p.bind(
        tangents, operand, select_prim=select_prim,
        **_window_params(window_dimensions, window_strides, padding, base_dilation,
                         window_dilation))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
    """JAX's shape arithmetic, without the operand checks of the primitive: shape functions
    (stax's ``init_fun``) pass -1 for an unknown batch size, which gives 0 as in JAX."""
    dims = (tuple(operand_shape) + tuple(window_dimensions) + tuple(window_strides)
            + tuple(d for pair in padding for d in pair))
    if not all(isinstance(d, (int, np.integer)) for d in dims):  # symbolic dimensions
        nd = len(window_dimensions)
        return reduce_window_shape(ShapedArray(tuple(operand_shape), np.dtype(np.float32)),
                                   window_dimensions, window_strides, padding,
                                   base_dilation or (1,) * nd, window_dilation or (1,) * nd)
    if base_dilation is not None:
        operand_shape = _dilate_shape(operand_shape, base_dilation)
    if window_dilation is not None:
        window_dimensions = _dilate_shape(window_dimensions, window_dilation)
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
    return tuple(max((d - w) // s + 1, 0)
                 for d, w, s in zip(padded, window_dimensions, window_strides))


def _dilate_shape(shape, dilation):
    if not np.all(np.greater(dilation, 0)):
        raise TypeError(f"All dilations must be positive, got {dilation}.")
    dilation = (1,) * (len(shape) - len(dilation)) + tuple(dilation)
    return tuple(d if r == 1 else max(1 + r * (d - 1), 0) for d, r in zip(shape, dilation))


# -- reduce -------------------------------------------------------------------------------------

def _get_monoid_reducer(monoid_op, xs):
    val, dtype = _monoid_init(xs)
    if val is None:
        return None
    intlike = dtypes.is_bool(dtype) or dtypes.is_int(dtype)
    if monoid_op is add:
        return reduce_sum if np.equal(val, 0) else None
    if monoid_op is mul:
        return _reducer("reduce_prod") if np.equal(val, 1) else None
    if monoid_op is bitwise_or and intlike:
        return _reducer("reduce_or") if np.equal(val, np.array(0, dtype)) else None
    if monoid_op is bitwise_and and intlike:
        return _reducer("reduce_and") if np.equal(val, np.array(-1).astype(dtype)) else None
    if monoid_op is bitwise_xor and intlike:
        return None  # traxla has no reduce_xor primitive: the generic reduce handles it
    if monoid_op is lax_max:
        return _reducer("reduce_max") if np.equal(val, get_max_identity(dtype)) else None
    if monoid_op is lax_min:
        return _reducer("reduce_min") if np.equal(val, get_min_identity(dtype)) else None
    return None


def reduce(operands, init_values, computation, dimensions):  # noqa: A001
    """Reduces ``operands`` over ``dimensions`` with the monoid ``computation``
    (XLA's Reduce); ``operands`` and ``init_values`` may be matching pytrees."""
    flat_operands, flat_inits, operand_tree = _flatten_operands(operands, init_values,
                                                                "reduce")
    monoid = _get_monoid_reducer(computation, flat_inits)
    if monoid:
        weak = _aval(flat_operands[0]).weak_type and _aval(flat_inits[0]).weak_type
        out = monoid(*flat_operands, tuple(dimensions))
        return _convert_element_type(out, aval_of(out).dtype, weak)
    init_avals = tuple(_aval(v) for v in flat_inits)
    _, init_tree = tree_util.tree_flatten(init_values)
    closed, out_tree = _reduction_jaxpr(computation, init_avals, init_tree, "reduce comp")
    out = reduce_p.bind(*flat_operands, *flat_inits, computation=computation, jaxpr=closed,
                        dimensions=tuple(int(d) for d in dimensions))
    return tree_util.tree_unflatten(out_tree, out)


del _E


select_and_scatter_p = _W["select_and_scatter"]


def _select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                        init_value, scatter):
    """JAX's ``_select_and_scatter``: binds ``select_and_scatter`` with ``select`` and
    ``scatter`` traced as scalar jaxprs (cached per function and dtype)."""
    select_jaxpr, select_consts = _scalar_jaxpr(select, aval_of(init_value).dtype)
    scatter_jaxpr, scatter_consts = _scalar_jaxpr(scatter, aval_of(init_value).dtype)
    return select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=select_jaxpr, select_consts=select_consts,
        scatter_jaxpr=scatter_jaxpr, scatter_consts=scatter_consts,
        window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
        padding=tuple(padding))


def _dim(d):
    return d if is_symbolic(d) else int(d)
