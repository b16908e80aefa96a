"""More elementwise functions of ``jax.numpy``: ``gcd``/``lcm`` (a ``while_loop``),
``frexp``/``ldexp`` (exponent bit manipulation), ``modf``, ``spacing``, ``sinc`` (with
JAX's ``custom_jvp`` at zero), ``fmax``/``fmin``, ``trunc``, ``logaddexp2``, the array-API
``bitwise_*`` names, ``bitwise_count`` (``population_count``), ``packbits``/``unpackbits``,
``iscomplex``/``isreal``/``isrealobj``, ``i0`` and ``cumulative_sum``/``cumulative_prod``."""
from __future__ import annotations

import operator

import numpy as np

from traxla import lax
from traxla.autodiff import custom_jvp, jvp
from traxla.ir import dtypes
from traxla.ir.literals import float0_zeros
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import (ensure_arraylike, promote_args, promote_args_inexact,
                         promote_args_numeric, promote_dtypes, promote_dtypes_inexact)
from traxla.numpy._ufuncs import (_iscomplexobj, _where, abs as _abs, ceil, floor, floor_divide, isinf,
                      isnan, ufuncs, where)
from traxla.numpy._reductions import any as _any, _cumulative_reduction
from traxla.numpy._shape import broadcast_arrays, expand_dims, ravel, swapaxes
from traxla.numpy._ufuncs import _replace_inf, _wrap_between, right_shift
from traxla.numpy._creation import arange, asarray
from traxla.numpy._pad import pad

_INT_DTYPES = {16: np.int16, 32: np.int32, 64: np.int64}


def _jit(fn, name, static=()):
    return jit_named(fn, name, static)


# -- fmax, fmin, trunc ------------------------------------------------------------------------

def _fmin(x1, x2):
    return where(ufuncs["less"](x1, x2) | isnan(x2), x1, x2)


def _fmax(x1, x2):
    return where(ufuncs["greater"](x1, x2) | isnan(x2), x1, x2)


fmin = _jit(_fmin, "fmin")
fmax = _jit(_fmax, "fmax")


def _trunc(x):
    x = ensure_arraylike("trunc", x)
    if dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype):
        return x
    return where(lax.lt(x, lax._const(x, 0)), ceil(x), floor(x))


trunc = _jit(_trunc, "trunc")


# -- gcd, lcm ------------------------------------------------------------------------------------

def _gcd_cond_fn(xs):
    _, x2 = xs
    return _any(x2 != 0)


def _gcd_body_fn(xs):
    x1, x2 = xs
    x1, x2 = (where(x2 != 0, x2, x1), where(x2 != 0, lax.rem(x1, x2), lax._const(x2, 0)))
    return (where(x1 < x2, x2, x1), where(x1 < x2, x1, x2))


def _gcd(x1, x2):
    x1, x2 = ensure_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not dtypes.is_int(lax.dtype_of(x1)):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = broadcast_arrays(x1, x2)
    result, _ = lax.while_loop(_gcd_cond_fn, _gcd_body_fn, (_abs(x1), _abs(x2)))
    return result


gcd = _jit(_gcd, "gcd")


def _lcm(x1, x2):
    x1, x2 = ensure_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = _abs(x1), _abs(x2)
    if not dtypes.is_int(lax.dtype_of(x1)):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return where(d == 0, lax._const(d, 0), ufuncs["multiply"](x1, floor_divide(x2, d)))


lcm = _jit(_lcm, "lcm")


# -- frexp, ldexp, modf, spacing --------------------------------------------------------------

def _normalize_float(x):
    info = dtypes.finfo(lax.dtype_of(x))
    int_type = _INT_DTYPES[info.bits]
    cond = lax.abs(x) < info.tiny
    x1 = _where(cond, lax.mul(x, lax._const(x, 1 << info.nmant)), x)
    x2 = _where(cond, int_type(-info.nmant), int_type(0))
    return lax.bitcast_convert_type(x1, int_type), x2


def _frexp_impl(x):
    dtype = lax.dtype_of(x)
    info = dtypes.finfo(dtype)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    x1, x2 = _normalize_float(x)
    x2 += ((x1 >> info.nmant) & mask) - bias + 1
    x1 &= ~(mask << info.nmant)
    x1 |= (bias - 1) << info.nmant
    x1 = lax.bitcast_convert_type(x1, dtype)
    cond = isinf(x) | isnan(x) | (x == 0)
    x2 = _where(cond, lax._zeros(x2), x2)
    return _where(cond, x, x1), lax.convert_element_type(x2, np.int32)


_frexp_impl.__name__ = "_frexp"
_frexp = custom_jvp(_frexp_impl)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    m, e = _frexp(x)
    return (m, e), (t * 2.0 ** -e.astype(m.dtype), float0_zeros(np.shape(e)))


def _frexp_fn(x, /):
    x = ensure_arraylike("frexp", x)
    x, = promote_dtypes_inexact(x)
    if dtypes.is_complex(lax.dtype_of(x)):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


frexp = _jit(_frexp_fn, "frexp")


def _ldexp(x1, x2, /):
    x1, x2 = ensure_arraylike("ldexp", x1, x2)
    x1_dtype, x2_dtype = x1.dtype, x2.dtype
    if dtypes.is_complex(x1_dtype) or dtypes.is_inexact(x2_dtype):
        raise ValueError(f"ldexp not supported for input types {(x1_dtype, x2_dtype)}")
    x1, = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = (e.astype(x2.dtype) + x2).astype(x1.dtype)
    m = _where(e > 0, m * 2, m)
    e = _where(e > 0, e - 1, e)
    x = m * (2 ** e.astype(m.dtype))
    return _where(isinf(x1) | (x1 == 0), x1, x)


ldexp = _jit(_ldexp, "ldexp")


def _modf(x, /, out=None):
    x = ensure_arraylike("modf", x)
    x, = promote_dtypes_inexact(x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    whole = _where(lax.ge(x, lax._zero(x)), floor(x), ceil(x))
    return x - whole, whole


modf = _jit(_modf, "modf")


def _spacing(x, /):
    arr, = promote_args_inexact("spacing", x)
    arr = lax._lift(arr)
    if dtypes.is_complex(lax.dtype_of(arr)):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    copysign = ufuncs["copysign"]
    inf = lax._const(arr, np.inf)
    smallest_subnormal = dtypes.finfo(lax.dtype_of(arr)).smallest_subnormal
    if lax.dtype_of(arr) == np.float16:
        return lax.nextafter(arr, inf) - arr
    result = lax.nextafter(arr, copysign(inf, arr)) - arr
    return _where(result == 0, copysign(smallest_subnormal, arr), result)


spacing = _spacing  # inline in JAX
spacing.__name__ = "spacing"


# -- sinc -----------------------------------------------------------------------------------------

def _sinc_maclaurin_impl(k, x):
    # the k-th derivative of sin(x)/x at zero (used by the JVP's monomial term)
    if k % 2:
        return x * 0
    return lax.add(x * 0, lax._const(x, (-1) ** (k // 2) / (k + 1)))


_sinc_maclaurin_impl.__name__ = "_sinc_maclaurin"
_sinc_maclaurin = custom_jvp(_sinc_maclaurin_impl, nondiff_argnums=(0,))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), _sinc_maclaurin(k + 1, x) * t


def _sinc(x, /):
    x = ensure_arraylike("sinc", x)
    x, = promote_dtypes_inexact(x)
    eq_zero = lax.eq(x, lax._const(x, 0))
    pi_x = lax.mul(lax._const(x, np.pi), x)
    safe_pi_x = _where(eq_zero, lax._const(x, 1), pi_x)
    return _where(eq_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


sinc = _jit(_sinc, "sinc")


# -- logaddexp2 -----------------------------------------------------------------------------------

def _logaddexp2_impl(x1, x2, /):
    """log2(exp2(x1) + exp2(x2)) without overflow (JAX's lax_other.logaddexp2)."""
    amax = lax.max(x1, x2)
    invln2 = lax._const(amax, 1 / np.log(2))
    dt = lax.dtype_of(x1)
    if dtypes.is_float(dt):
        delta = lax.sub(x1, x2)
        return lax.select(lax._isnan(delta), lax.add(x1, x2),
                          lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))))
    if dtypes.is_complex(dt):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, lax._const(amax, 2)))
        out = lax.add(amax, lax.mul(invln2, lax.log1p(lax.exp2(delta))))
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi / np.log(2)))
    raise ValueError(f"logaddexp2 requires floating-point or complex inputs; got {dt}")


_logaddexp2_impl.__name__ = "logaddexp2"
_lax_logaddexp2 = custom_jvp(_logaddexp2_impl)


@_lax_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    primal_out = _lax_logaddexp2(x1, x2)
    tangent_out = lax.add(
        lax.mul(t1, lax.exp2(lax.sub(_replace_inf(x1), _replace_inf(primal_out)))),
        lax.mul(t2, lax.exp2(lax.sub(_replace_inf(x2), _replace_inf(primal_out)))))
    return primal_out, tangent_out


def logaddexp2(x1, x2, /):
    """log2(2**x1 + 2**x2), computed stably."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _lax_logaddexp2(x1, x2)


# -- bitwise names --------------------------------------------------------------------------------

def _bitwise_not(x, /):
    return lax.bitwise_not(*promote_args("bitwise_not", x))


def _bitwise_invert(x, /):
    return lax.bitwise_not(*promote_args("bitwise_invert", x))


def _bitwise_left_shift(x, y, /):
    return lax.shift_left(*promote_args_numeric("bitwise_left_shift", x, y))


def _bitwise_right_shift(x1, x2, /):
    return right_shift(x1, x2)


# JAX jits these with inline=True, so no inner jit shows in the jaxpr
bitwise_not, bitwise_invert = _bitwise_not, _bitwise_invert
bitwise_left_shift, bitwise_right_shift = _bitwise_left_shift, _bitwise_right_shift
for _f, _n in ((bitwise_not, "bitwise_not"), (bitwise_invert, "bitwise_invert"),
               (bitwise_left_shift, "bitwise_left_shift"),
               (bitwise_right_shift, "bitwise_right_shift")):
    _f.__name__ = _n


def _bitwise_count(x, /):
    x, = promote_args_numeric("bitwise_count", x)
    return lax.population_count(_abs(x)).astype("uint8")


bitwise_count = _jit(_bitwise_count, "bitwise_count")


def _packbits(a, axis=None, bitorder="big"):
    arr = ensure_arraylike("packbits", a)
    if not (dtypes.is_int(arr.dtype) or dtypes.is_bool(arr.dtype)):
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    arr = lax.ne(arr, lax._const(arr, 0)).astype("uint8")
    bits = arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = lax.pad(arr, np.uint8(0), (arr.ndim - 1) * [(0, 0, 0)] + [(0, 8 - remainder, 0)])
    arr = arr.reshape(arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    bits = expand_dims(bits, tuple(range(arr.ndim - 1)))
    packed = (arr << bits).sum(-1).astype("uint8")
    return swapaxes(packed, axis, -1)


packbits = _jit(_packbits, "packbits", ("axis", "bitorder"))


def _unpackbits(a, axis=None, count=None, bitorder="big"):
    arr = ensure_arraylike("unpackbits", a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = asarray(1) << arange(8, dtype="uint8")
    if bitorder == "big":
        bits = bits[::-1]
    if axis is None:
        arr, axis = ravel(arr), 0
    arr = swapaxes(arr, axis, -1)
    unpacked = ((arr[..., None] & expand_dims(bits, tuple(range(arr.ndim)))) > 0).astype("uint8")
    unpacked = unpacked.reshape(unpacked.shape[:-2] + (-1,))
    if count is not None:
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1)
                           + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)


unpackbits = _jit(_unpackbits, "unpackbits", ("axis", "count", "bitorder"))


# -- complex predicates -----------------------------------------------------------------------

def _iscomplex(x):
    i = ufuncs["imag"](x)
    return lax.ne(i, lax._const(i, 0))


def _isreal(x):
    i = ufuncs["imag"](x)
    return lax.eq(i, lax._const(i, 0))


iscomplex = _jit(_iscomplex, "iscomplex")
isreal = _jit(_isreal, "isreal")


def isrealobj(x):
    return not _iscomplexobj(x)


# -- i0 -------------------------------------------------------------------------------------------

def _i0_impl(x):
    abs_x = lax.abs(x)
    return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


_i0_impl.__name__ = "_i0"
_i0 = custom_jvp(_i0_impl)


@_i0.defjvp
def _i0_jvp(primals, tangents):
    primal_out, tangent_out = jvp(_i0_impl, primals, tangents)
    return primal_out, where(primals[0] == 0, 0.0, tangent_out)


def _i0_fn(x):
    x_arr, = promote_args_inexact("i0", x)
    if not dtypes.is_float(lax.dtype_of(x_arr)):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {lax.dtype_of(x_arr)}")
    return _i0(x_arr)


i0 = _jit(_i0_fn, "i0")


# -- cumulative_sum, cumulative_prod ----------------------------------------------------------

def _cumulative(name, fn, x, axis, dtype, include_initial, initial):
    x = ensure_arraylike(name, x)
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a cumulative "
                         f"{'sum' if 'sum' in name else 'product'}, however a scalar value or "
                         "scalar array was given.")
    if axis is None:
        axis = 0
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to an "
                             "explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
    axis = operator.index(axis)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    axis %= x.ndim
    out = fn(x, axis, dtype)
    if include_initial:
        zeros_shape = list(x.shape)
        zeros_shape[axis] = 1
        out = lax.concatenate([lax.full(zeros_shape, initial, dtype=out.dtype), out], dimension=axis)
    return out


def _cumsum_with_promotion_impl(a, axis=None, dtype=None):
    return _cumulative_reduction("_cumsum_with_promotion", lambda a, ax: lax.cumsum(a, ax), a,
                                 axis, dtype, promote_integers=True)


_cumsum_with_promotion = _jit(_cumsum_with_promotion_impl, "_cumsum_with_promotion",
                              ("axis", "dtype"))


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_sum", lambda a, ax, dt: _cumsum_with_promotion(
        a, axis=ax, dtype=None if dt is None else dtypes.to_dtype(dt)), x, axis, dtype,
        include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_prod", lambda a, ax, dt: _cumulative_reduction(
        "cumulative_prod", lambda v, k: lax.cumprod(v, k), a, ax,
        None if dt is None else dtypes.to_dtype(dt)), x, axis, dtype, include_initial, 1)
