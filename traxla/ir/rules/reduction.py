"""Reductions (reduce_sum/max/min/prod/and/or, argmax/argmin) and dot_general."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.config import config as _config
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.rules._util import ANY, INT_BOOL, NUM, ORDERED, accepts, check_dtype

_flags = _config.current
REDUCTIONS = {"reduce_sum": NUM, "reduce_prod": NUM, "reduce_max": ANY, "reduce_min": ANY,
              "reduce_and": INT_BOOL, "reduce_or": INT_BOOL}
P: dict[str, Primitive] = {}
_LOGICAL = ("reduce_and", "reduce_or", "reduce_xor")


def _reduce_rule(name, categories):
    def rule(x, *, axes, out_sharding=None):
        # JAX's order and messages: the shape rule (axes as given, negative ones refused),
        # then the dtype rule; the logical reductions' shape rule checks the dtype first
        axes = tuple(axes)
        if name in _LOGICAL and not accepts(categories, x.dtype):
            raise TypeError(f"logical reduction requires operand dtype bool or int, got {x.dtype}.")
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
        if not all(0 <= a < x.ndim for a in axes):
            raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {x}.")
        check_dtype(name, categories, x.dtype)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        # JAX strips the weak type of the logical reductions (not of sum/prod/max/min)
        weak = x.weak_type and name not in _LOGICAL
        return ShapedArray(shape, x.dtype, weak)
    return rule


def _arg_rule(name):
    def rule(x, *, axes, index_dtype):
        # JAX's order and messages: the shape rule, then the dtype rule
        if len(axes) != 1:
            raise ValueError(f"{name} requires exactly one axis, got axes={axes}")
        axis, = axes
        if not 0 <= axis < x.ndim:
            raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
        if x.shape[axis] < 1:
            raise ValueError("argmin and argmax require non-empty reduced dimension. "
                             f"operand.shape={x.shape} {axis=}")
        if not dtypes.is_complex(x.dtype):  # as JAX's: complex is refused at lowering only
            check_dtype(name, ORDERED, x.dtype)
        if not dtypes.is_int(np.dtype(index_dtype)):
            raise TypeError(f"index_dtype must be an integer type, but got "
                            f"{np.dtype(index_dtype).name}")
        shape = tuple(d for i, d in enumerate(x.shape) if i != axes[0])
        return ShapedArray(shape, np.dtype(index_dtype), False)
    return rule


def check_f16_reduction(x, axes):
    """JAX's ``jax_allow_f16_reductions=False``: a reduce_sum of a float16 or bfloat16 operand
    over a dimension longer than one is refused."""
    if (not _flags.allow_f16_reductions and x.dtype in (np.float16, dtypes.bfloat16)
            and not all(x.shape[d] == 1 for d in axes)):
        raise ValueError(f"reduce_sum on operand {x.str_short(True)} is not allowed when "
                         "jax_allow_f16_reductions=False.")


def _reduce_sum_rule(rule):
    def checked(x, *, axes, out_sharding=None):
        check_f16_reduction(x, tuple(axes))
        return rule(x, axes=axes, out_sharding=out_sharding)
    return checked


for _name, _cats in REDUCTIONS.items():
    if _name == "reduce_sum":  # it reads a flag for 16-bit floats: those are typed afresh
        P[_name] = def_typing(Primitive(_name), _reduce_sum_rule(_reduce_rule(_name, _cats)),
                              memoize=True, unless_dtypes=(np.float16, dtypes.bfloat16))
    else:
        P[_name] = def_typing(Primitive(_name), _reduce_rule(_name, _cats), memoize=True)
for _name in ("argmax", "argmin"):
    P[_name] = def_typing(Primitive(_name), _arg_rule(_name), memoize=True)


def _type_properties(dtype):
    """XLA's HigherPrecisionType order, by which JAX picks dot_general's result dtype."""
    real = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dtype, dtype)
    floating = dtypes.is_float(real)
    bits = 1 if dtypes.is_bool(real) else (dtypes.finfo(real).bits if floating
                                            else dtypes.iinfo(real).bits)
    return (dtypes.is_complex(dtype), dtypes.finfo(real).maxexp if floating else -1,
            dtypes.finfo(real).nmant if floating else -1, bits, not dtypes.is_unsigned_int(real))


def _dot_general_dtype(lhs, rhs, preferred_element_type):
    """JAX's rule: operands may differ (the higher-precision one wins, equal precision must be
    the same dtype); a preferred_element_type may not narrow a non-floating result."""
    lp, rp = _type_properties(lhs.dtype), _type_properties(rhs.dtype)
    if lp == rp and lhs.dtype != rhs.dtype:
        raise TypeError(f"lax.dot_general argument type error: {lhs.dtype}, {rhs.dtype}")
    result = lhs.dtype if lp >= rp else rhs.dtype
    if preferred_element_type is None or np.dtype(preferred_element_type) == result:
        return result
    preferred = np.dtype(preferred_element_type)
    if not dtypes.is_float(result) and _type_properties(preferred)[3] < _type_properties(result)[3]:
        raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                        f"got preferred_element_type of {preferred} for result type of {result}.")
    return preferred


def _dot_general_rule(lhs, rhs, *, dimension_numbers, precision=None,
                      preferred_element_type=None, out_sharding=None):
    (lc, rc), (lb, rb) = dimension_numbers
    for name, dims, aval in (("lhs contracting", lc, lhs), ("rhs contracting", rc, rhs),
                             ("lhs batch", lb, lhs), ("rhs batch", rb, rhs)):
        if any(not 0 <= d < aval.ndim for d in dims):
            raise TypeError(f"dot_general requires {name} dimensions to be in range for an operand "
                            f"of shape {aval.shape}, got {tuple(dims)}.")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and batch "
                        f"dimensions, got dimension_numbers {dimension_numbers}.")
    if len(set(lc) | set(lb)) != len(lc) + len(lb) or len(set(rc) | set(rb)) != len(rc) + len(rb):
        raise TypeError(f"dot_general requires distinct contracting and batch dimensions, got "
                        f"dimension_numbers {dimension_numbers}.")
    lbs, rbs = tuple(lhs.shape[d] for d in lb), tuple(rhs.shape[d] for d in rb)
    if lbs != rbs:
        raise TypeError(f"dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                        f"the same shape, got {lbs} and {rbs}.")
    lcs, rcs = tuple(lhs.shape[d] for d in lc), tuple(rhs.shape[d] for d in rc)
    if lcs != rcs:
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                        f"got {lcs} and {rcs}.")
    for aval in (lhs, rhs):
        check_dtype("dot_general", ANY, aval.dtype)
    dtype = _dot_general_dtype(lhs, rhs, preferred_element_type)
    free_l = tuple(d for i, d in enumerate(lhs.shape) if i not in lc and i not in lb)
    free_r = tuple(d for i, d in enumerate(rhs.shape) if i not in rc and i not in rb)
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return ShapedArray(lbs + free_l + free_r, dtype, weak)


def _dot_general_params(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    out = [("dimension_numbers", ((list(lc), list(rc)), (list(lb), list(rb))))]
    for key in ("precision", "preferred_element_type"):
        if params.get(key) is not None:
            out.append((key, params[key]))
    return out


dot_general_p = def_typing(Primitive("dot_general"), _dot_general_rule, memoize=True)
P["dot_general"] = dot_general_p
from traxla.ir.jaxpr_printer import pp_param_rules  # noqa: E402

pp_param_rules[dot_general_p] = _dot_general_params
# (JAX's own binds of reduce_max/min/prod carry no out_sharding; one given prints, as JAX's)
