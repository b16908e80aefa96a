"""Elementwise functions: promotion, then lax calls, binding the same primitives
in the same order as ``jax.numpy`` (including the functions JAX stages out as
an inner ``jit``: ``clip``, ``round``, ``rint``, ``floor_divide``,
``remainder``, ``arccosh`` and ``where``'s ``_where``)."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from traxla import lax
from traxla.api import jit
from traxla.numpy._jitutil import as_jit_result, jit_named as _jit_named
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import Literal
from traxla.numpy._promotion import (INEXACT_DTYPES, check_arraylike, promote_args, promote_args_inexact,
                         promote_args_numeric, promote_dtypes, promote_dtypes_inexact,
                         promote_dtypes_numeric, promote_shapes)
from traxla.numpy._promotion import broadcast_shapes, result_type
import traxla.numpy._creation as _numpy__creation
from traxla.autodiff import custom_jvp


def _ensure_arraylike(fun_name, *args):
    check_arraylike(fun_name, *args)
    out = [lax._asarray(a) for a in args]
    return out[0] if len(out) == 1 else out


def _constant_like(x, value):
    """``jnp.array(value, dtype=x.dtype)``: a strongly typed scalar constant."""
    dt = lax.dtype_of(x)
    return Literal(np.array(value, dt), ShapedArray((), dt, False))


def _to_bool(x):
    return x if dtypes.is_bool(lax.dtype_of(x)) else lax.ne(x, lax._const(x, 0))


def _is_concrete(x) -> bool:
    return not hasattr(x, "_trace")


def _python_float_literal(x):
    """A Python float as JAX's inline ``jit`` hands it to the primitive: a weakly typed
    literal that keeps the float's own value (``log 6.283185307179586:f32[]``)."""
    return Literal(x, ShapedArray((), dtypes.default_float(), True))


def _unary_inexact(name, lax_fn):
    def fn(x, /):
        if type(x) is float:
            return lax_fn(_python_float_literal(x))
        aval = getattr(x, "aval", None)  # fast path: an array of an inexact dtype passes as is
        if type(aval) is ShapedArray and aval.dtype in INEXACT_DTYPES:
            return lax_fn(x)
        return lax_fn(*promote_args_inexact(name, x))
    fn.__name__ = name
    return fn


def _binary(name, lax_fn, promote=promote_args):
    def fn(x1, x2, /):
        return lax_fn(*promote(name, x1, x2))
    fn.__name__ = name
    return fn


# name -> lax function, for functions that promote integers to float.
_INEXACT_UNARY = {
    "exp": lax.exp, "exp2": lax.exp2, "log": lax.log, "log1p": lax.log1p, "expm1": lax.expm1,
    "tanh": lax.tanh, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "arcsin": lax.asin,
    "arccos": lax.acos, "arctan": lax.atan, "sinh": lax.sinh, "cosh": lax.cosh,
    "arcsinh": lax.asinh, "arctanh": lax.atanh, "sqrt": lax.sqrt, "cbrt": lax.cbrt,
}
_BINARY = {
    "maximum": lax.max, "minimum": lax.min, "equal": lax.eq,
    "not_equal": lax.ne, "less": lax.lt, "less_equal": lax.le, "greater": lax.gt,
    "greater_equal": lax.ge, "bitwise_and": lax.bitwise_and, "bitwise_or": lax.bitwise_or,
    "bitwise_xor": lax.bitwise_xor,
}
_INEXACT_BINARY = {"true_divide": lax.div, "arctan2": lax.atan2, "nextafter": lax.nextafter}

ufuncs = {}
for _n, _f in _INEXACT_UNARY.items():
    ufuncs[_n] = _unary_inexact(_n, _f)
for _n, _f in _BINARY.items():
    ufuncs[_n] = _binary(_n, _f)
for _n, _f in _INEXACT_BINARY.items():
    ufuncs[_n] = _binary(_n, _f, promote_args_inexact)
ufuncs["divide"] = ufuncs["true_divide"]


def _complex_comparison(name, lax_op):
    """An ordering comparison; complex operands compare lexicographically as (real, imag)
    pairs, as JAX's (and NumPy's)."""
    def fn(x1, x2, /):
        x, y = promote_args(name, x1, x2)
        if dtypes.is_complex(lax.dtype_of(x)):
            return lax.select(lax.eq(lax.real(x), lax.real(y)), lax_op(lax.imag(x), lax.imag(y)),
                              lax_op(lax.real(x), lax.real(y)))
        return lax_op(x, y)
    fn.__name__ = name
    return fn


for _n in ("less", "less_equal", "greater", "greater_equal"):
    ufuncs[_n] = _complex_comparison(_n, _BINARY[_n])


def negative(x, /):
    return lax.neg(*promote_args("negative", x))


def sign(x, /):
    return lax.sign(*promote_args("sign", x))


def add(x1, x2, /):
    x1, x2 = promote_args("add", x1, x2)
    # (an operand's tangent passes through: as_jit_result)
    return (lax.bitwise_or(x1, x2) if lax.dtype_of(x1) == dtypes.bool_
            else as_jit_result(lax.add(x1, x2)))


def subtract(x1, x2, /):
    return as_jit_result(lax.sub(*promote_args("subtract", x1, x2)))


def multiply(x1, x2, /):
    x1, x2 = promote_args("multiply", x1, x2)
    return lax.bitwise_and(x1, x2) if lax.dtype_of(x1) == dtypes.bool_ else lax.mul(x1, x2)


ufuncs.update(negative=negative, sign=sign, add=add, subtract=subtract, multiply=multiply)


@jit
def arccosh(x, /):
    result = lax.acosh(*promote_args_inexact("arccosh", x))
    if dtypes.is_complex(lax.dtype_of(result)):  # NumPy's branch: non-negative real part
        result = _where(ufuncs["less"](lax.real(result), 0), lax.neg(result), result)
    return result


ufuncs["arccosh"] = arccosh


def _alias(name, target):
    def fn(*args):
        return target(*promote_args(name, *args))
    fn.__name__ = name
    return fn


acos, acosh = _alias("acos", ufuncs["arccos"]), _alias("acosh", arccosh)
asin, asinh = _alias("asin", ufuncs["arcsin"]), _alias("asinh", ufuncs["arcsinh"])
atan, atanh = _alias("atan", ufuncs["arctan"]), _alias("atanh", ufuncs["arctanh"])
atan2 = _alias("atan2", ufuncs["arctan2"])


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        return lax_fn(*map(_to_bool, promote_args(name, x1, x2)))
    fn.__name__ = name
    return fn


ufuncs["logical_and"] = _logical("logical_and", lax.bitwise_and)
ufuncs["logical_or"] = _logical("logical_or", lax.bitwise_or)
ufuncs["logical_xor"] = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    return lax.bitwise_not(*map(_to_bool, promote_args("logical_not", x)))


def invert(x, /):
    return lax.bitwise_not(*promote_args("invert", x))


def abs(x, /):  # noqa: A001
    x = _ensure_arraylike("absolute", x)
    dt = lax.dtype_of(x)
    return lax._lift(x) if dtypes.is_bool(dt) or dtypes.is_unsigned_int(dt) else lax.abs(x)


def floor(x, /):
    x = _ensure_arraylike("floor", x)
    if not dtypes.is_inexact(np.dtype(lax.dtype_of(x))):  # np.dtype refuses keys, as JAX's isdtype
        return lax._lift(x)
    return lax.floor(*promote_args_inexact("floor", x))


def ceil(x, /):
    x = _ensure_arraylike("ceil", x)
    if not dtypes.is_inexact(np.dtype(lax.dtype_of(x))):  # np.dtype refuses keys, as JAX's isdtype
        return lax._lift(x)
    return lax.ceil(*promote_args_inexact("ceil", x))


# -- where ----------------------------------------------------------------------

def _broadcast_arrays(*args):
    shapes = [lax.shape_of(a) for a in args]
    if not shapes or all(s == shapes[0] for s in shapes):
        return [lax._asarray(a) for a in args]
    shape = broadcast_shapes(*shapes)
    return [lax.broadcast_to(a, shape) for a in args]


@jit
def _where(condition, x, y):
    condition, x, y = _ensure_arraylike("where", condition, x, y)
    if not dtypes.is_bool(lax.dtype_of(condition)):
        condition = lax.ne(condition, lax._zero(condition))
    x, y = promote_dtypes(x, y)
    if not lax.shape_of(condition):
        x, y = _broadcast_arrays(x, y)
    else:
        condition, x, y = _broadcast_arrays(condition, x, y)
    if 0 in lax.shape_of(x):
        return x
    return lax.select(condition, x, y)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    if x is None and y is None:
        from traxla.numpy._searching import nonzero  # circular: traxla.numpy._searching imports traxla.numpy._ufuncs while it loads
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to "
                         f"traxla.numpy.where, got {x} and {y}.")
    check_arraylike("where", condition, x, y)
    return _where(condition, x, y)


# -- division, remainder, powers -------------------------------------------------

def _float_divmod(x1, x2):
    mod = lax.rem(x1, x2)
    x1_corrected = _where(ufuncs["equal"](x2, 0), x1, lax.sub(x1, mod))
    div = lax.div(x1_corrected, x2)
    ind = lax.bitwise_and(ufuncs["not_equal"](mod, 0),
                          ufuncs["not_equal"](lax.sign(x2), lax.sign(mod)))
    mod = lax.select(ind, add(mod, x2), mod)
    div = lax.select(ind, ufuncs["subtract"](div, 1.0), div)
    return lax.round(div), mod


@jit
def floor_divide(x1, x2, /):
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dt = lax.dtype_of(x1)
    if dtypes.is_unsigned_int(dt):
        return lax.div(x1, x2)
    if dtypes.is_int(dt):
        quotient = lax.div(x1, x2)
        different_signs = ufuncs["not_equal"](lax.sign(x1), lax.sign(x2))
        inexact = ufuncs["not_equal"](lax.rem(x1, x2), 0)
        select = ufuncs["logical_and"](different_signs, inexact)
        return _where(select, ufuncs["subtract"](quotient, 1), quotient)
    if dtypes.is_complex(dt):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


@jit
def remainder(x1, x2, /):
    """Python's modulo: the result takes the sign of the divisor."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    zero = _constant_like(x1, 0)
    if dtypes.is_int(lax.dtype_of(x2)):
        x2 = _where(ufuncs["equal"](x2, 0), lax.full_like(x2, 1), x2)
    trunc_mod = lax.rem(x1, x2)
    trunc_mod_not_zero = lax.ne(trunc_mod, zero)
    do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                              trunc_mod_not_zero)
    return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


def _pow_int_int(x1, x2):
    """Integer power by binary exponentiation over the exponent's low 6 bits."""
    zero = _constant_like(x2, 0)
    one = _constant_like(x2, 1)
    acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


def _power(x1, x2):
    x1, x2 = promote_shapes("power", x1, x2)
    x1_, x2_ = promote_args_numeric("power", x1, x2)
    if dtypes.is_int(lax.dtype_of(x1_)) or dtypes.is_bool(lax.dtype_of(x1_)):
        return _pow_int_int(x1_, x2_)
    if dtypes.is_inexact(lax.dtype_of(x1)) and dtypes.is_int(lax.dtype_of(x2)):
        return lax.pow(x1, x2)
    return lax.pow(x1_, x2_)


def power(x1, x2, /):
    check_arraylike("power", x1, x2)
    if _is_concrete(x2):
        try:
            exponent = operator.index(x2)
        except TypeError:
            pass
        else:
            x1, = promote_dtypes_numeric(x1)
            return lax.integer_pow(x1, exponent)
    return _power(x1, x2)


def square(x, /):
    x = _ensure_arraylike("square", x)
    x, = promote_dtypes_numeric(x)
    return lax.square(x)


def reciprocal(x, /):
    x = _ensure_arraylike("reciprocal", x)
    x, = promote_dtypes_inexact(x)
    return lax.integer_pow(x, -1)


def isfinite(x, /):
    x = _ensure_arraylike("isfinite", x)
    dt = lax.dtype_of(x)
    if dtypes.is_float(dt):
        return lax.is_finite(x)
    if dtypes.is_complex(dt):
        raise NotImplementedError("isfinite of complex arrays needs real/imag, which traxla lacks")
    return lax.full_like(x, True, dtypes.bool_)


def left_shift(x1, x2, /):
    return lax.shift_left(*promote_args_numeric("left_shift", x1, x2))


def right_shift(x1, x2, /):
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    fn = lax.shift_right_logical if dtypes.is_unsigned_int(lax.dtype_of(x1)) else lax.shift_right_arithmetic
    return fn(x1, x2)


# -- rounding and clipping ---------------------------------------------------------

@jit
def rint(x, /):
    x = _ensure_arraylike("rint", x)
    dt = lax.dtype_of(x)
    if dtypes.is_bool(dt) or dtypes.is_int(dt):
        return lax.convert_element_type(x, dtypes.default_float())
    if dtypes.is_complex(dt):
        raise NotImplementedError("rint of complex arrays is not supported")
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def _round(a, decimals=0, out=None):
    a = _ensure_arraylike("round", a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dt = lax.dtype_of(a)
    if dtypes.is_int(dt):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a
    if decimals > np.log10(dtypes.finfo(dt).max):
        return lax._asarray(a)
    if dtypes.is_complex(dt):  # as JAX: the real and imaginary parts rounded apart
        return lax.complex(_round_float(lax.real(a), decimals), _round_float(lax.imag(a), decimals))
    return _round_float(a, decimals)


def _round_float(x, decimals):
    if decimals == 0:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    dt = lax.dtype_of(x)
    x = lax.convert_element_type(x, np.float32) if dt == np.float16 else x
    factor = lax._const(x, 10 ** decimals)  # a weak scalar's factor is weak: the result stays weak
    out = lax.div(lax.round(lax.mul(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN), factor)
    return lax.convert_element_type(out, dt) if dt == np.float16 else out


_round.__name__ = "round"
round = jit(_round, static_argnums=(1,), static_argnames=("decimals",))  # noqa: A001


def _around(a, decimals=0, out=None):
    return round(a, decimals, out)


_around.__name__ = "around"
around = jit(_around, static_argnums=(1,), static_argnames=("decimals",))


@jit
def clip(arr=None, /, min=None, max=None):  # noqa: A002
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if builtins.any(dtypes.is_complex(lax.dtype_of(t)) for t in (arr, min, max) if t is not None):
        raise ValueError("Clip received a complex value either through the input or the min/max "
                         "keywords. Complex values have no ordering and cannot be clipped. "
                         "Please convert to a real value or array by taking the real or "
                         "imaginary components via jax.numpy.real/imag respectively.")
    if min is not None:
        arr = ufuncs["maximum"](min, arr)
    if max is not None:
        arr = ufuncs["minimum"](max, arr)
    return _asarray(arr)


def _asarray(x):
    return _numpy__creation.asarray(x)


def positive(x, /):
    return as_jit_result(lax._lift(lax._asarray(*promote_args("positive", x))))


def sigmoid(x):
    x, = promote_args_inexact("sigmoid", x)
    return lax.logistic(x)



# -- breadth (issue #3): NaN/inf tests, logs, hypot, angles, complex parts -----------------------

def isnan(x, /):
    x = _ensure_arraylike("isnan", x)
    return lax.ne(x, x)


@jit
def isinf(x, /):
    x = _ensure_arraylike("isinf", x)
    dt = lax.dtype_of(x)
    if dtypes.is_float(dt):
        return lax.eq(lax.abs(x), _constant_like(x, np.inf))
    if dtypes.is_complex(dt):
        re, im = lax.real(x), lax.imag(x)
        return lax.bitwise_or(lax.eq(lax.abs(re), _constant_like(re, np.inf)),
                              lax.eq(lax.abs(im), _constant_like(im, np.inf)))
    return lax.full_like(x, False, dtypes.bool_)


def _isposneginf(infinity, x, out):
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    dt = lax.dtype_of(x)
    if dtypes.is_float(dt):
        return lax.eq(x, _constant_like(x, infinity))
    if dtypes.is_complex(dt):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.full_like(x, False, dtypes.bool_)


def isposinf(x, /, out=None):
    return _isposneginf(np.inf, _ensure_arraylike("isposinf", x), out)


def isneginf(x, /, out=None):
    return _isposneginf(-np.inf, _ensure_arraylike("isneginf", x), out)


def isfinite(x, /):  # noqa: F811  (complex inputs: both parts finite, as JAX)
    x = _ensure_arraylike("isfinite", x)
    dt = lax.dtype_of(x)
    if dtypes.is_float(dt):
        return lax.is_finite(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.full_like(x, True, dtypes.bool_)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = _ensure_arraylike("nan_to_num", x)
    dt = lax.dtype_of(x)
    if not dtypes.is_inexact(dt):
        return x
    if dtypes.is_complex(dt):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), _numpy__creation.asarray(nan, dtype=dt), x)
    out = where(isposinf(out), _numpy__creation.asarray(posinf, dtype=dt), out)
    out = where(isneginf(out), _numpy__creation.asarray(neginf, dtype=dt), out)
    return out


_nan_to_num.__name__ = "nan_to_num"
nan_to_num = jit(_nan_to_num)


def log2(x, /):
    x, = promote_args_inexact("log2", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(_constant_like(re, 2))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(x), lax.log(_constant_like(x, 2)))


def log10(x, /):
    x, = promote_args_inexact("log10", x)
    dt = lax.dtype_of(x)
    one_over_log10 = np.array(0.4342944819032518, dtype=dtypes.finfo(dt).dtype)
    if dtypes.is_complex(dt):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        return lax.complex(lax.mul(re, one_over_log10), lax.mul(im, one_over_log10))
    return lax.mul(lax.log(x), one_over_log10)


@jit
def hypot(x1, x2, /):
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.is_complex(lax.dtype_of(x1)):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please convert "
                         "to real values first, such as by using abs(x)")
    x1, x2 = lax.abs(x1), lax.abs(x2)
    idx_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
    x1, x2 = ufuncs["maximum"](x1, x2), ufuncs["minimum"](x1, x2)
    eq0 = ufuncs["equal"]
    x = _where(eq0(x1, 0), x1, ufuncs["multiply"](x1, lax.sqrt(add(1, lax.square(lax.div(
        x2, _where(eq0(x1, 0), lax._ones(x1), x1)))))))
    return _where(idx_inf, lax._const(x, np.inf), x)


def deg2rad(x, /):
    x, = promote_args_inexact("deg2rad", x)
    return lax.mul(x, lax._const(x, np.pi / 180))


def rad2deg(x, /):
    x, = promote_args_inexact("rad2deg", x)
    return lax.mul(x, lax._const(x, 180 / np.pi))


def degrees(x, /):
    return rad2deg(x)


def radians(x, /):
    return deg2rad(x)


def _iscomplexobj(x) -> bool:
    if x is None:
        return False
    try:
        return dtypes.is_complex(lax.dtype_of(x))
    except Exception:  # noqa: BLE001
        return np.iscomplexobj(x)


def real(val, /):
    val = _ensure_arraylike("real", val)
    return lax.real(val) if _iscomplexobj(val) else as_jit_result(lax._lift(lax._asarray(val)))


def imag(val, /):
    val = _ensure_arraylike("imag", val)
    return lax.imag(val) if _iscomplexobj(val) else lax.full_like(val, 0)


def conjugate(x, /):
    x = _ensure_arraylike("conjugate", x)
    return lax.conj(x) if _iscomplexobj(x) else as_jit_result(lax._lift(lax._asarray(x)))


def conj(x, /):
    return conjugate(x)


def _angle(z, deg=False):
    z = _ensure_arraylike("angle", z)
    re, im = real(z), imag(z)
    dt = lax.dtype_of(re)
    if not dtypes.is_inexact(dt) or (dtypes.is_float(lax.dtype_of(z)) and not lax.shape_of(z)):
        dt = dtypes.default_float()
        re = lax.convert_element_type(re, dt)
        im = lax.convert_element_type(im, dt)
    result = lax.atan2(im, re)
    return degrees(result) if deg else result


angle = _jit_named(_angle, "angle", ("deg",))


def fabs(x, /):
    x = _ensure_arraylike("fabs", x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(*promote_args_inexact("fabs", x))


def float_power(x, y, /):
    return lax.pow(*promote_args_inexact("float_power", x, y))


@jit
def fmod(x1, x2, /):
    x1, x2 = _ensure_arraylike("fmod", x1, x2)
    if dtypes.is_int(result_type(x1, x2)[0]):
        x2 = _where(ufuncs["equal"](x2, 0), lax._ones(x2), x2)
    return lax.rem(*promote_args_numeric("fmod", x1, x2))


@jit
def divmod(x1, x2, /):  # noqa: A001
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if dtypes.is_int(lax.dtype_of(x1)):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


@jit
def heaviside(x1, x2, /):
    x1, x2 = _ensure_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    zero = lax._const(x1, 0)
    return _where(lax.lt(x1, zero), zero,
                  _where(lax.gt(x1, zero), lax._const(x1, 1),
                         _where(lax._isnan(x1), x1, x2)))


_INT_DTYPES = {16: np.int16, 32: np.int32, 64: np.int64}


@jit
def signbit(x, /):
    x, = promote_args("signbit", x)
    dt = lax.dtype_of(x)
    if dtypes.is_int(dt):
        return lax.lt(x, _constant_like(x, 0))
    if dtypes.is_bool(dt):
        return lax.full_like(x, False, dtypes.bool_)
    if not dtypes.is_float(dt):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dt}")
    info = dtypes.finfo(dt)
    if info.bits not in _INT_DTYPES:
        raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
    x = lax.bitcast_convert_type(x, _INT_DTYPES[info.bits])
    return lax.convert_element_type(right_shift(x, info.nexp + info.nmant), np.bool_)


@jit
def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.is_complex(lax.dtype_of(x1)):
        raise TypeError("copysign does not support complex-valued inputs")
    return _where(signbit(x2).astype(bool), negative(lax.abs(x1)), lax.abs(x1))


def _logaddexp_impl(x1, x2):
    x1_arr, x2_arr = lax._asarray(x1), lax._asarray(x2)
    amax = lax.max(x1_arr, x2_arr)
    if dtypes.is_float(lax.dtype_of(x1_arr)):
        delta = lax.sub(x1_arr, x2_arr)
        return lax.select(lax._isnan(delta), lax.add(x1_arr, x2_arr),
                          lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))
    if dtypes.is_complex(lax.dtype_of(x1_arr)):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, lax._const(amax, 2)))
        out = lax.add(amax, lax.log1p(lax.exp(delta)))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi))
    raise ValueError("logaddexp requires floating-point or complex inputs; got "
                     f"{lax.dtype_of(x1_arr)}")


def _wrap_between(x, _a):
    """``x`` wrapped into ``[-a, a]`` (the imaginary part of a complex logaddexp)."""
    a, two_a, zero = lax._const(x, _a), lax._const(x, 2 * _a), lax._const(x, 0)
    rem = lax.rem(lax.add(x, a), two_a)
    rem = lax.select(lax.lt(rem, zero), lax.add(rem, two_a), rem)
    return lax.sub(rem, a)


def _replace_inf(x):
    re_x = lax.real(x) if dtypes.is_complex(lax.dtype_of(x)) else x
    inf = lax._const(re_x, float("inf"))
    return lax.select(lax.eq(re_x, inf), lax._zeros(x), x)


def _make_logaddexp():

    def logaddexp(x1, x2, /):
        return _logaddexp_impl(x1, x2)

    fn = custom_jvp(logaddexp)

    def _logaddexp_jvp(primals, tangents):
        x1, x2 = primals
        t1, t2 = tangents
        primal_out = fn(x1, x2)
        tangent_out = lax.add(
            lax.mul(t1, lax.exp(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
            lax.mul(t2, lax.exp(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
        return primal_out, tangent_out

    fn.defjvp(_logaddexp_jvp)
    return fn


_lax_logaddexp = None


def logaddexp(x1, x2, /):
    global _lax_logaddexp
    if _lax_logaddexp is None:
        _lax_logaddexp = _make_logaddexp()
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _lax_logaddexp(x1, x2)


ufuncs.update(isnan=isnan, isinf=isinf, isposinf=isposinf, isneginf=isneginf,
              isfinite=isfinite, log2=log2, log10=log10, hypot=hypot, deg2rad=deg2rad,
              rad2deg=rad2deg, degrees=degrees, radians=radians, real=real, imag=imag,
              conjugate=conjugate, conj=conj, fabs=fabs, float_power=float_power, fmod=fmod,
              heaviside=heaviside, signbit=signbit, copysign=copysign, logaddexp=logaddexp,
              nan_to_num=nan_to_num, angle=angle)
