"""Elementwise primitives: unary math, binary arithmetic and bitwise ops,
comparisons, select_n, clamp and dtype conversions."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.primitive import Primitive, def_printing, def_typing
from traxla.ir.rules._util import (ANY, ANY_BOOL_SECOND, FLOAT, FLOAT_COMPLEX, FLOAT_COMPLEX_SIGNED, INT,
                    INT_BOOL, INT_FLOAT, NUM, ORDERED, broadcast_shapes, check_dtype,
                    check_same_dtypes)


def _real_dtype(dtype):
    return {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}.get(dtype, dtype)


# name -> accepted categories. Params each op carries are declared below.
UNARY = {
    "neg": NUM, "sign": NUM, "floor": FLOAT, "ceil": FLOAT, "round": FLOAT,
    "is_finite": FLOAT, "exp": FLOAT_COMPLEX, "exp2": FLOAT_COMPLEX, "log": FLOAT_COMPLEX,
    "log1p": FLOAT_COMPLEX, "expm1": FLOAT_COMPLEX, "tanh": FLOAT_COMPLEX,
    "logistic": FLOAT_COMPLEX, "sin": FLOAT_COMPLEX, "cos": FLOAT_COMPLEX, "tan": FLOAT_COMPLEX,
    "asin": FLOAT_COMPLEX, "acos": FLOAT_COMPLEX, "atan": FLOAT_COMPLEX, "sinh": FLOAT_COMPLEX,
    "cosh": FLOAT_COMPLEX, "asinh": FLOAT_COMPLEX, "acosh": FLOAT_COMPLEX, "atanh": FLOAT_COMPLEX,
    "sqrt": FLOAT_COMPLEX, "rsqrt": FLOAT_COMPLEX, "cbrt": FLOAT, "abs": FLOAT_COMPLEX_SIGNED,
    "not": INT_BOOL, "erf": FLOAT, "erf_inv": FLOAT, "integer_pow": NUM,
    "stop_gradient": ANY, "copy": ANY,
    "population_count": INT, "clz": INT,
}
# Ops that take JAX's ``accuracy`` param (printed only when set).
WITH_ACCURACY = {"exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "sin", "cos",
                 "tan", "sqrt", "rsqrt", "cbrt"}

BINARY = {
    "add": NUM, "sub": NUM, "mul": NUM, "div": NUM, "rem": INT_FLOAT, "pow": FLOAT_COMPLEX,
    "max": ANY_BOOL_SECOND, "min": ANY_BOOL_SECOND, "atan2": FLOAT, "nextafter": FLOAT,
    "and": INT_BOOL, "or": INT_BOOL, "xor": INT_BOOL,
    "shift_left": INT, "shift_right_logical": INT, "shift_right_arithmetic": INT,
}
# Ops whose second operand accepts other categories than the first: pow's exponent may be an
# integer (JAX's pow_p takes [float | complex, int | float | complex]).
SECOND_OPERAND = {"pow": NUM}
COMPARE = {"eq": ANY, "ne": ANY, "lt": ORDERED, "le": ORDERED, "gt": ORDERED, "ge": ORDERED,
           # total-order comparisons (sort comparators, searchsorted): -0 < +0, NaN ordered
           "eq_to": ANY, "lt_to": ORDERED, "le_to": ORDERED}
# The jnp function the "same dtypes" message points users to: JAX's _JNP_FUNCTION_EQUIVALENTS,
# keyed by primitive name (so none for rem, and/or/xor, lt/le/gt/ge: JAX's keys there are
# other names)
_TIP = {"add": "jnp.add", "sub": "jnp.subtract", "mul": "jnp.multiply", "div": "jnp.divide",
        "max": "jnp.maximum", "min": "jnp.minimum", "atan2": "jnp.arctan2",
        "nextafter": "jnp.nextafter", "eq": "jnp.equal", "ne": "jnp.not_equal",
        "shift_left": "jnp.left_shift", "shift_right_logical": "jnp.right_shift",
        "shift_right_arithmetic": "jnp.right_shift"}

P: dict[str, Primitive] = {}


def _unary_rule(name, categories):
    def rule(x, **params):
        check_dtype(name, categories, x.dtype)
        if name == "is_finite":
            return ShapedArray(x.shape, dtypes.bool_, x.weak_type)
        if name == "abs":
            return ShapedArray(x.shape, _real_dtype(x.dtype), x.weak_type)
        if name == "integer_pow" and not isinstance(params["y"], (int, np.integer)):
            raise TypeError(f"integer_pow requires an integer exponent y, got {params['y']!r}.")
        if name == "integer_pow" and params["y"] < 0 and dtypes.is_int(x.dtype):
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"integer_pow({x}, {params['y']})")
        return ShapedArray(x.shape, x.dtype, x.weak_type)
    return rule


def _binary_rule(name, categories, out_dtype=None):
    def rule(x, y):
        if name in ("eq", "ne") and dtypes.is_extended(x.dtype):  # keys compare (as in JAX)
            check_same_dtypes(name, (x, y), _TIP.get(name))
            return ShapedArray(broadcast_shapes(name, (x.shape, y.shape)), out_dtype, False)
        # JAX's order: the shape rule (broadcasting), then the dtype rule
        shape = broadcast_shapes(name, (x.shape, y.shape))
        check_dtype(name, categories, x.dtype, 0)
        check_dtype(name, SECOND_OPERAND.get(name, categories), y.dtype, 1)
        if name == "pow":  # JAX's _pow_dtype_rule
            if not dtypes.is_int(y.dtype) and x.dtype != y.dtype:
                raise TypeError(
                    "the first argument to pow must have an inexact dtype (float or complex), "
                    "and the second argument must have an inexact or integer dtype, and two "
                    f"inexact dtypes must match, but got {x.dtype} and {y.dtype} respectively.")
        else:
            check_same_dtypes(name, (x, y), _TIP.get(name))
        if out_dtype is not None:  # comparisons: weak when both operands are (as in JAX)
            return ShapedArray(shape, out_dtype, x.weak_type and y.weak_type)
        return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)
    return rule


for _name, _cats in UNARY.items():
    P[_name] = def_typing(Primitive(_name), _unary_rule(_name, _cats), memoize=True,
                          typed_params=_name == "integer_pow")
    if _name in WITH_ACCURACY:
        def_printing(P[_name], hide_if_none=("accuracy",))
for _name, _cats in BINARY.items():
    P[_name] = def_typing(Primitive(_name), _binary_rule(_name, _cats), memoize=True)
for _name, _cats in COMPARE.items():
    P[_name] = def_typing(Primitive(_name), _binary_rule(_name, _cats, out_dtype=dtypes.bool_),
                                   memoize=True)


def _select_n_rule(which, *cases):
    # JAX's order: the shape rule, then the dtype rule
    if not cases:
        raise TypeError("select must have at least one case")
    first = cases[0]
    for c in cases[1:]:
        if c.shape != first.shape:
            raise TypeError(f"select cases must have the same shapes, got "
                            f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != first.shape:
        raise TypeError(f"select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {first.shape}.")
    check_same_dtypes("select", cases, "jnp.where")
    if not (dtypes.is_bool(which.dtype) or dtypes.is_int(which.dtype)):
        raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype}.")
    if dtypes.is_bool(which.dtype) and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    return ShapedArray(first.shape, first.dtype, all(c.weak_type for c in cases))


def _clamp_rule(lo, x, hi):
    for nm, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(f"clamp requires {nm}.shape == operand.shape or {nm}.shape == (), "
                            f"got {nm}.shape={bound.shape}, operand.shape={x.shape}.")
    check_same_dtypes("clamp", (lo, x, hi))
    return ShapedArray(x.shape, x.dtype, lo.weak_type and x.weak_type and hi.weak_type)


def _convert_rule(x, *, new_dtype, weak_type, sharding=None):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _bitcast_rule(x, *, new_dtype):
    old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
    if old == new:
        shape = x.shape
    elif old > new:
        shape = x.shape + (old // new,)
    elif (x.shape[-1] if x.shape else 1) * old != new:  # JAX's class and message
        dim = x.shape[-1] if x.shape else 1
        raise ValueError(f"Attempting to convert array of shape {x.shape} from {x.dtype} of size "
                         f"{8 * old} bits to {np.dtype(new_dtype)} of size {8 * new}, bits but "
                         f"{dim} * {8 * old} != {8 * new}")
    else:
        shape = x.shape[:-1]
    special = [d for d in (x.dtype, np.dtype(new_dtype)) if d == np.bool_ or d.kind == "c"]
    if special and x.dtype != np.dtype(new_dtype):
        raise TypeError("lax.bitcast_convert_type does not support bool or complex values "
                        "unless the operand and destination types match. "
                        f"Got operand dtype={x.dtype}, new_dtype={np.dtype(new_dtype)!r}. "
                        "Consider using the arr.view() method instead.")
    return ShapedArray(shape, new_dtype, False)


def _edtype_rules(dtype, frm, to):
    """Whether an extended dtype's rules allow converting ``frm`` to ``to`` (JAX's
    ``convert_to``/``convert_from``, or ``allow_conversion``); a key type has none."""
    rules = getattr(dtype, "_rules", None)
    if rules is None:
        return False
    check = getattr(rules, "convert_to" if to is dtype else "convert_from", None)
    if check is None:
        return bool(getattr(rules, "allow_conversion", False))
    return check(frm, to) if to is dtype else check(dtype, to)


def _to_edtype_rule(x, *, edtype):
    """An array of an extended dtype's representation type as that dtype (JAX's)."""
    if not _edtype_rules(edtype, x.dtype, edtype):
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to {edtype}")
    rep_shape, rep_dtype = edtype.physical_shape, edtype.physical_dtype
    if x.dtype != rep_dtype:
        raise ValueError(
            "can only convert to extended dtype from its representation dtype, but tried to "
            f"convert from {x.dtype} to {edtype} which doesn't match the representation type "
            f"{rep_dtype}.")
    n = len(x.shape) - len(rep_shape)
    if n < 0 or tuple(x.shape[n:]) != tuple(rep_shape):
        raise ValueError(
            "can only convert to extended dtype from an array of its representation type, "
            f"but the extended dtype {edtype} has a representation shape {rep_shape} while "
            f"the given representation array has shape {x.shape}.")
    return ShapedArray(x.shape[:n], edtype, x.weak_type)


def _from_edtype_rule(x, *, dtype):
    """An extended dtype's array as its representation type (JAX's)."""
    if not _edtype_rules(x.dtype, x.dtype, dtype):
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to {dtype}")
    if x.dtype.physical_dtype != dtype:
        raise ValueError(
            "can only convert from extended dtype to its representation dtype, but tried to "
            f"convert from {x.dtype} to {dtype} which doesn't match the representation type "
            f"{x.dtype.physical_dtype}.")
    return ShapedArray(tuple(x.shape) + tuple(x.dtype.physical_shape), dtype, x.weak_type)


to_edtype_p = P["to_edtype"] = def_typing(Primitive("to_edtype"), _to_edtype_rule)
from_edtype_p = P["from_edtype"] = def_typing(Primitive("from_edtype"), _from_edtype_rule)
select_n_p = P["select_n"] = def_typing(Primitive("select_n"), _select_n_rule,
                                                memoize=True)
clamp_p = P["clamp"] = def_typing(Primitive("clamp"), _clamp_rule, memoize=True)
convert_element_type_p = P["convert_element_type"] = def_typing(
    Primitive("convert_element_type"), _convert_rule, memoize=True)
def_printing(convert_element_type_p, hide=("sharding",))
bitcast_convert_type_p = P["bitcast_convert_type"] = def_typing(
    Primitive("bitcast_convert_type"), _bitcast_rule, memoize=True)
