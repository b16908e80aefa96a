"""Elementwise functions: promotion, then one lax call each (table-driven)."""
from __future__ import annotations

import operator

import numpy as np

from .. import lax
from ..ir import dtypes
from ._promotion import (check_arraylike, promote_args, promote_args_inexact,
                         promote_args_numeric, promote_dtypes_numeric, typed)


def _unary_inexact(name, lax_fn):
    def fn(x, /):
        x, = promote_args_inexact(name, x)
        return lax_fn(x)
    fn.__name__ = name
    return fn


def _unary_numeric(name, lax_fn):
    def fn(x, /):
        x, = promote_args_numeric(name, x)
        return lax_fn(x)
    fn.__name__ = name
    return fn


def _binary(name, lax_fn, promote=promote_args):
    def fn(x1, x2, /):
        x1, x2 = promote(name, x1, x2)
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


# name -> lax function, for functions that promote integers to float.
_INEXACT_UNARY = {
    "exp": lax.exp, "exp2": lax.exp2, "log": lax.log, "log1p": lax.log1p, "expm1": lax.expm1,
    "tanh": lax.tanh, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "arcsin": lax.asin,
    "arccos": lax.acos, "arctan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh,
    "arcsinh": lax.asinh, "arccosh": lax.acosh, "arctanh": lax.atanh, "sqrt": lax.sqrt,
    "cbrt": lax.cbrt,
}
_NUMERIC_UNARY = {"negative": lax.neg, "sign": lax.sign}
_BINARY = {
    "add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "maximum": lax.max,
    "minimum": lax.min, "equal": lax.eq, "not_equal": lax.ne, "less": lax.lt,
    "less_equal": lax.le, "greater": lax.gt, "greater_equal": lax.ge,
    "bitwise_and": lax.bitwise_and, "bitwise_or": lax.bitwise_or, "bitwise_xor": lax.bitwise_xor,
    "logical_and": None, "logical_or": None, "logical_xor": None,
}
_INEXACT_BINARY = {"true_divide": lax.div, "arctan2": lax.atan2, "nextafter": lax.nextafter}

ufuncs = {}
for _n, _f in _INEXACT_UNARY.items():
    ufuncs[_n] = _unary_inexact(_n, _f)
for _n, _f in _NUMERIC_UNARY.items():
    ufuncs[_n] = _unary_numeric(_n, _f)
for _n, _f in _BINARY.items():
    if _f is not None:
        ufuncs[_n] = _binary(_n, _f)
for _n, _f in _INEXACT_BINARY.items():
    ufuncs[_n] = _binary(_n, _f, promote_args_inexact)
ufuncs["divide"] = ufuncs["true_divide"]
ufuncs["arcsin"].__name__ = "arcsin"


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        x1, x2 = (lax.ne(x, _zero(x)) if not dtypes.is_bool(lax.dtype_of(x)) else x for x in (x1, x2))
        return lax_fn(x1, x2)
    fn.__name__ = name
    return fn


def _zero(x):
    return lax._convert_element_type(0, lax.dtype_of(x), False)


ufuncs["logical_and"] = _logical("logical_and", lax.bitwise_and)
ufuncs["logical_or"] = _logical("logical_or", lax.bitwise_or)
ufuncs["logical_xor"] = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    x, = promote_args("logical_not", x)
    return lax.bitwise_not(x) if dtypes.is_bool(lax.dtype_of(x)) else lax.eq(x, _zero(x))


def invert(x, /):
    x, = promote_args("invert", x)
    return lax.bitwise_not(x)


def abs(x, /):  # noqa: A001
    x, = promote_args_numeric("abs", x)
    dt = lax.dtype_of(x)
    return x if dtypes.is_unsigned_int(dt) or dtypes.is_bool(dt) else lax.abs(x)


def floor(x, /):
    x, = promote_args_numeric("floor", x)
    return x if not dtypes.is_inexact(lax.dtype_of(x)) else lax.floor(x)


def ceil(x, /):
    x, = promote_args_numeric("ceil", x)
    return x if not dtypes.is_inexact(lax.dtype_of(x)) else lax.ceil(x)


def power(x1, x2, /):
    check_arraylike("power", x1, x2)
    try:
        exponent = operator.index(x2)
    except TypeError:
        pass
    else:
        x1, = promote_dtypes_numeric(x1)
        return lax.integer_pow(x1, exponent)
    x1, x2 = promote_args_numeric("power", x1, x2)
    dt = lax.dtype_of(x1)
    if dtypes.is_int(dt):
        raise NotImplementedError("power of integer arrays by integer arrays is not supported yet; "
                                  "convert to a float dtype first.")
    return lax.pow(x1, x2)


def remainder(x1, x2, /):
    """Python's modulo: the result takes the sign of the divisor."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    zero = _zero(x1)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


def floor_divide(x1, x2, /):
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dt = lax.dtype_of(x1)
    if dtypes.is_int(dt):
        zero = _zero(x1)
        select = lax.bitwise_and(lax.ne(lax.lt(x1, zero), lax.lt(x2, zero)),
                                 lax.ne(lax.rem(x1, x2), zero))
        one = lax._convert_element_type(1, dt, False)
        return lax.select(select, lax.sub(lax.div(x1, x2), one), lax.div(x1, x2))
    return lax.floor(lax.div(x1, x2))


def square(x, /):
    x, = promote_args_numeric("square", x)
    return lax.integer_pow(x, 2)


def reciprocal(x, /):
    x, = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def isfinite(x, /):
    x, = promote_args("isfinite", x)
    dt = lax.dtype_of(x)
    if dtypes.is_float(dt):
        return lax.is_finite(x)
    return lax.full_like(x, True, dtypes.bool_)


def left_shift(x1, x2, /):
    x1, x2 = promote_args_numeric("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    fn = lax.shift_right_logical if dtypes.is_unsigned_int(lax.dtype_of(x1)) else lax.shift_right_arithmetic
    return fn(x1, x2)


def rint(x, /):
    x, = promote_args_inexact("rint", x)
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0):  # noqa: A001
    a, = promote_args_numeric("round", a)
    if decimals != 0:
        factor = lax._convert_element_type(10 ** decimals, lax.dtype_of(a), False)
        return lax.div(lax.round(lax.mul(a, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    if not dtypes.is_inexact(lax.dtype_of(a)):
        return a
    return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)


def positive(x, /):
    x, = promote_args("positive", x)
    return x


def _clip_bounds(x, lo, hi):
    if lo is not None:
        x = ufuncs["maximum"](lo, x)
    if hi is not None:
        x = ufuncs["minimum"](hi, x)
    return x


def clip(arr=None, /, min=None, max=None):  # noqa: A002
    check_arraylike("clip", arr)
    return _clip_bounds(arr, min, max)


def _where3(condition, x, y):
    condition = lax.ne(condition, _zero(condition)) if not dtypes.is_bool(lax.dtype_of(condition)) else condition
    x, y = promote_args("where", x, y)
    from ._promotion import broadcast_shapes
    shape = broadcast_shapes(lax.shape_of(condition), lax.shape_of(x), lax.shape_of(y))
    from ._shape import broadcast_to
    return lax.select(broadcast_to(condition, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def where(condition, x=None, y=None, /):
    if x is None or y is None:
        raise ValueError("traxla.numpy.where with one argument needs dynamic shapes and is not "
                         "supported under jit; pass both x and y.")
    check_arraylike("where", condition, x, y)
    return _where3(condition, x, y)


def sigmoid(x):
    x, = promote_args_inexact("sigmoid", x)
    return lax.logistic(x)


del np, typed
