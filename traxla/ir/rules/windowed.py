"""Windowed reductions (JAX's lax/windowed_reductions.py) and the generic ``reduce``:
``reduce_window_sum/max/min``, the generic ``reduce_window`` and ``reduce`` (whose
monoid is a traced scalar jaxpr), the max-pool derivatives ``select_and_gather_add``
(JVP) and ``select_and_scatter_add`` (its transpose), and the general ``select_and_scatter``
(its select and scatter functions traced scalar jaxprs; typing and lowering only, as JAX)."""
from __future__ import annotations

from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.rules.conv import dilate_shape, stride_dim

WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                 "window_dilation")


def _check_shapelike(fun, arg, obj, non_zero=False):
    if any(d < 0 or (non_zero and d == 0) for d in obj):
        kind = "positive" if non_zero else "nonnegative"
        raise TypeError(f"{fun} {arg} must have every element be {kind}, got {tuple(obj)}.")


def reduce_window_shape(operand, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation):
    _check_shapelike("reduce_window", "window_dimensions", window_dimensions, True)
    _check_shapelike("reduce_window", "window_strides", window_strides, True)
    _check_shapelike("reduce_window", "base_dilation", base_dilation)
    _check_shapelike("reduce_window", "window_dilation", window_dilation)
    if operand.ndim != len(window_dimensions):
        raise TypeError("reduce_window got the wrong number of window_dimensions for operand: "
                        f"got operand shape {operand.shape} with window_dimensions "
                        f"{tuple(window_dimensions)}.")
    for name, vals in (("window_strides", window_strides), ("base_dilation", base_dilation),
                       ("window_dilation", window_dilation)):
        if len(vals) != len(window_dimensions):
            raise TypeError(f"reduce_window got inconsistent {name} and window_dimensions: got "
                            f"{name} {tuple(vals)} and window_dimensions "
                            f"{tuple(window_dimensions)}.")
    if len(padding) != len(window_dimensions):
        raise TypeError(f"reduce_window got {len(padding)} padding pairs for "
                        f"{len(window_dimensions)} window dimensions.")
    shape = dilate_shape(operand.shape, base_dilation)
    window = dilate_shape(window_dimensions, window_dilation)
    padded = tuple(d + lo + hi for d, (lo, hi) in zip(shape, padding))
    if any(p < 0 for p in padded):
        raise ValueError(f"reduce_window padding {tuple(padding)} is more negative than the "
                         f"operand shape {operand.shape} allows.")
    return tuple(stride_dim(p, w, s) for p, w, s in zip(padded, window, window_strides))


def _monoid_rule(name, number_only):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        if number_only and x.dtype.kind not in "iufc":
            raise TypeError(f"operand to {name} must have a number dtype, got {x.dtype.name}")
        shape = reduce_window_shape(x, window_dimensions, window_strides, padding,
                                    base_dilation, window_dilation)
        return ShapedArray(shape, x.dtype, x.weak_type)
    return rule


P: dict[str, Primitive] = {}
for _name, _number_only in (("reduce_window_sum", True), ("reduce_window_max", False),
                            ("reduce_window_min", False)):
    P[_name] = def_typing(Primitive(_name), _monoid_rule(_name, _number_only))


def _split(avals):
    n = len(avals) // 2
    return avals[:n], avals[n:]


def _reduce_window_rule(*avals, jaxpr, consts, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation):
    operands, inits = _split(avals)
    if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                        f"got operand dtypes {[o.dtype for o in operands]} and init_value "
                        f"dtypes {[i.dtype for i in inits]}.")
    if any(i.shape for i in inits):
        raise TypeError("reduce_window expected init_values to be scalars but init_values have "
                        f"shapes {[i.shape for i in inits]}.")
    shape = reduce_window_shape(operands[0], window_dimensions, window_strides, padding,
                                base_dilation, window_dilation)
    return [ShapedArray(shape, o.dtype, o.weak_type) for o in operands]


reduce_window_p = def_typing(Primitive("reduce_window", multiple_results=True),
                             _reduce_window_rule)
P["reduce_window"] = reduce_window_p


def _reduce_rule(*avals, computation, jaxpr, dimensions):
    operands, inits = _split(avals)
    if any(i.shape for i in inits):
        raise ValueError(f"reduce found non-scalar initial value: {[i.shape for i in inits]}")
    if [o.dtype for o in operands] != [i.dtype for i in inits]:
        raise TypeError("reduce operand dtypes should match corresponding initial value dtypes, "
                        f"got operands={[o.str_short() for o in operands]} and "
                        f"initial_values={[i.str_short() for i in inits]}")
    for o in operands:
        if any(not 0 <= d < o.ndim for d in dimensions):
            raise ValueError(f"reduce dimensions {tuple(dimensions)} out of range for operand "
                             f"shape {o.shape}")
    return [ShapedArray(tuple(d for i, d in enumerate(o.shape) if i not in dimensions),
                        o.dtype, o.weak_type and i.weak_type) for o, i in zip(operands, inits)]


reduce_p = def_typing(Primitive("reduce", multiple_results=True), _reduce_rule)
P["reduce"] = reduce_p


def _select_and_scatter_add_rule(source, operand, *, select_prim, window_dimensions,
                                 window_strides, padding):
    if source.dtype != operand.dtype:
        raise TypeError("select_and_scatter_add requires source and operand of the same dtype, "
                        f"got {source.dtype} and {operand.dtype}.")
    expected = reduce_window_shape(operand, window_dimensions, window_strides, padding,
                                   (1,) * operand.ndim, (1,) * operand.ndim)
    if tuple(source.shape) != expected:
        raise TypeError(f"select_and_scatter_add source shape {source.shape} does not match the "
                        f"windowed shape {expected} of operand shape {operand.shape}.")
    return ShapedArray(operand.shape, source.dtype, source.weak_type)


def _select_and_gather_add_rule(tangents, operand, *, select_prim, window_dimensions,
                                window_strides, padding, base_dilation, window_dilation):
    if tangents.shape != operand.shape:
        raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                        f"{tangents.shape} and {operand.shape}.")
    if tangents.dtype != operand.dtype:
        raise TypeError("select_and_gather_add requires tangents and operand of the same dtype, "
                        f"got {tangents.dtype} and {operand.dtype}.")
    shape = reduce_window_shape(operand, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation)
    return ShapedArray(shape, tangents.dtype, tangents.weak_type)


select_and_scatter_add_p = def_typing(Primitive("select_and_scatter_add"),
                                      _select_and_scatter_add_rule)
select_and_gather_add_p = def_typing(Primitive("select_and_gather_add"),
                                     _select_and_gather_add_rule)
P["select_and_scatter_add"] = select_and_scatter_add_p
P["select_and_gather_add"] = select_and_gather_add_p


def _select_and_scatter_rule(operand, source, init_value, *, select_jaxpr, select_consts,
                             scatter_jaxpr, scatter_consts, window_dimensions, window_strides,
                             padding):
    _check_shapelike("select_and_scatter", "window_dimensions", window_dimensions)
    _check_shapelike("select_and_scatter", "window_strides", window_strides)
    if len(window_dimensions) != len(window_strides):
        raise TypeError("select_and_scatter got inconsistent window_strides and "
                        f"window_dimensions: got window_strides {window_strides} and "
                        f"window_dimensions {window_dimensions}.")
    if source.dtype != operand.dtype or init_value.dtype != operand.dtype:
        raise TypeError("select_and_scatter requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in (operand, source, init_value))}.")
    weak = operand.weak_type and source.weak_type and init_value.weak_type
    return ShapedArray(operand.shape, operand.dtype, weak)


select_and_scatter_p = def_typing(Primitive("select_and_scatter"), _select_and_scatter_rule)
P["select_and_scatter"] = select_and_scatter_p
