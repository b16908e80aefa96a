"""The dtype side of ``jax.numpy``: scalar types for every dtype JAX names (``int_``,
``single``, ``cdouble``, the ml_dtypes float8/float6/float4 and int4/int2/int1 types, ...),
NumPy's abstract scalar classes, ``promote_types``/``can_cast``/``issubdtype``/
``isdtype``, print options, ``save``/``savez``/``load`` through NumPy, the ``from*``
constructors, ``astype``/``copy``/``empty_like``, ``logspace``/``geomspace``,
``broadcast_shapes`` and ``iterable``."""
from __future__ import annotations

import operator

import ml_dtypes
import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.dtypes import issubdtype as _dtypes_issubdtype
from traxla.numpy._jitutil import jit_named
from traxla.numpy._promotion import (check_arraylike, ensure_arraylike, result_type,
                                     broadcast_shapes as _bs)
from traxla.numpy._creation import asarray, array, linspace, prototype as _prototype
from traxla.api.device_arrays import device_put as _device_put
from traxla.runtime import dlpack as _runtime_dlpack
from traxla.ir.dtypes import _lub
from traxla.numpy._ufuncs import power, sign, ufuncs
from traxla.numpy._shape import moveaxis

# -- scalar types ---------------------------------------------------------------------------------


class _ScalarMeta(type):
    """``jnp.float32`` & co: ``jnp.float32(x)`` is a 0-d (or n-d) Array of that dtype; the
    class compares and hashes as its NumPy scalar type does (so ``dtype=jnp.int4`` works)."""

    def __eq__(cls, other):
        return id(cls) == id(other) or cls._scalar_type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls._scalar_type)

    def __call__(cls, x=0):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls._scalar_type)


def _make_scalar_type(name, scalar_type):
    return _ScalarMeta(name, (), {"dtype": np.dtype(scalar_type), "_scalar_type": scalar_type,
                                  "__module__": "traxla.numpy"})


_EXTRA_TYPES = {
    "int1": ml_dtypes.int1, "int2": ml_dtypes.int2, "int4": ml_dtypes.int4,
    "uint1": ml_dtypes.uint1, "uint2": ml_dtypes.uint2, "uint4": ml_dtypes.uint4,
    "float4_e2m1fn": ml_dtypes.float4_e2m1fn, "float6_e2m3fn": ml_dtypes.float6_e2m3fn,
    "float6_e3m2fn": ml_dtypes.float6_e3m2fn, "float8_e3m4": ml_dtypes.float8_e3m4,
    "float8_e4m3": ml_dtypes.float8_e4m3, "float8_e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e5m2": ml_dtypes.float8_e5m2, "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu,
}
SCALAR_TYPES = {name: _make_scalar_type(name, t) for name, t in _EXTRA_TYPES.items()}
# NumPy-style aliases, as JAX spells them (64-bit names canonicalize when x64 is off)
_ALIASES = {"int_": np.int64, "uint": np.uint64, "float_": np.float64, "complex_": np.complex128,
            "single": np.float32, "double": np.float64, "csingle": np.complex64,
            "cdouble": np.complex128, "bool": np.bool_}
SCALAR_TYPES.update({name: _make_scalar_type(np.dtype(t).name if name != "bool" else "bool", t)
                     for name, t in _ALIASES.items()})

generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer, signedinteger = np.complexfloating, np.integer, np.signedinteger
unsignedinteger, flexible, character, object_ = np.unsignedinteger, np.flexible, np.character, np.object_
euler_gamma = float(np.euler_gamma)
ComplexWarning = np.exceptions.ComplexWarning if hasattr(np, "exceptions") else np.ComplexWarning


# -- dtype predicates and promotion ---------------------------------------------------------------

_ML_FLOATS = frozenset(np.dtype(t) for n, t in _EXTRA_TYPES.items() if n.startswith("float")) | {
    np.dtype(ml_dtypes.bfloat16)}
_ML_SIGNED = frozenset(np.dtype(t) for t in (ml_dtypes.int1, ml_dtypes.int2, ml_dtypes.int4))
_ML_UNSIGNED = frozenset(np.dtype(t) for t in (ml_dtypes.uint1, ml_dtypes.uint2, ml_dtypes.uint4))


def _as_np(x):
    if isinstance(x, _ScalarMeta):
        return x._scalar_type
    if hasattr(x, "dtype") and not isinstance(x, (type, np.dtype)):
        return x.dtype
    return x


def issubdtype(arg1, arg2):
    """``np.issubdtype`` that also handles PRNG key dtypes and places bfloat16, float8 & co
    under ``np.floating`` and int4 & co under ``np.signedinteger``/``np.unsignedinteger``
    (as JAX does)."""
    return _dtypes_issubdtype(arg1, arg2)


_DTYPE_KINDS = {
    "bool": lambda d: d == np.dtype(bool),
    "signed integer": lambda d: dtypes.is_signed_int(d) or d in _ML_SIGNED,
    "unsigned integer": lambda d: dtypes.is_unsigned_int(d) or d in _ML_UNSIGNED,
    "integral": lambda d: dtypes.is_int(d) or d in _ML_SIGNED or d in _ML_UNSIGNED,
    "real floating": lambda d: dtypes.is_float(d) or d in _ML_FLOATS,
    "complex floating": lambda d: dtypes.is_complex(d),
}
_DTYPE_KINDS["numeric"] = lambda d: any(f(d) for k, f in _DTYPE_KINDS.items() if k != "bool")


def isdtype(dtype, kind):
    """The array-API ``isdtype``: whether ``dtype`` is of ``kind`` (a name, a dtype, or a tuple)."""
    the_dtype = np.dtype(_as_np(dtype))
    for k in (kind if isinstance(kind, tuple) else (kind,)):
        if isinstance(k, str) and k in _DTYPE_KINDS:
            if _DTYPE_KINDS[k](the_dtype):
                return True
            continue
        try:
            if np.dtype(_as_np(k)) == the_dtype:
                return True
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of "
                                 f"{list(_DTYPE_KINDS)}, or a compatible input for jnp.dtype()")
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") from e
    return False


def promote_types(a, b):
    """The dtype both promote to under JAX's lattice (no x64 narrowing, as JAX)."""
    da, db = np.dtype(_as_np(a)), np.dtype(_as_np(b))
    return np.dtype(da if da == db else _lub((da, db)))


can_cast = np.can_cast


# -- print options, save / load, from* --------------------------------------------------------------

get_printoptions, printoptions, set_printoptions = (np.get_printoptions, np.printoptions,
                                                    np.set_printoptions)
save, savez = np.save, np.savez
array_repr, array_str = np.array_repr, np.array_str
iterable = np.iterable


def load(file, *args, **kwargs):
    """``np.load``; a ``.npy`` array comes back as a traxla Array (bfloat16 restored)."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == np.dtype("V2"):
            out = out.view(ml_dtypes.bfloat16)
        try:
            return asarray(out)
        except (TypeError, ValueError):
            return out
    return out


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) "
        "instead, although care should be taken if np.fromfile is used within a jax "
        "transformations because of its potential side-effect of consuming the file object; "
        "for more information see Common Gotchas: Pure Functions.")


def fromiter(*args, **kwargs):
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) "
        "instead, although care should be taken if np.fromiter is used within a jax "
        "transformations because of its potential side-effect of consuming the iterable "
        "object; for more information see Common Gotchas: Pure Functions.")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array holding the data of a DLPack-exporting object (NumPy, PyTorch, JAX, ...),
    sharing its memory where jaxlib can."""
    out = _runtime_dlpack.from_dlpack(x, device=device, copy=copy)
    return out if device is None else _device_put(out, device)


# -- astype, copy, empty_like, logspace, geomspace, broadcast_shapes ---------------------------------

def astype(x, dtype, /, *, copy=False, device=None):
    x_arr = ensure_arraylike("astype", x)
    dtype = dtypes.default_float() if dtype is None else dtypes.to_dtype(_as_np(dtype))
    if dtypes.is_complex(x_arr.dtype) and dtype == np.dtype(bool):
        x_arr = x_arr != lax._const(x_arr, 0)
    out = lax._convert_element_type(x_arr, dtype, False)
    return lax._lift(out)


def copy(a, order=None):
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    if not (hasattr(prototype, "dtype") and hasattr(prototype, "shape")):
        check_arraylike("empty_like", prototype)
        prototype = ensure_arraylike("empty_like", prototype)
    dtype = None if dtype is None else dtypes.to_dtype(_as_np(dtype))
    shape = None if shape is None else (tuple(shape) if np.ndim(shape) else (int(shape),))
    return lax._lift(lax.full_like(_prototype(prototype), 0, dtype, shape))


def _space_endpoints(name, start, stop, dtype):
    """``logspace``/``geomspace``'s ``(start, stop, dtype, computation)``: the output dtype
    (``dtype``, or the endpoints' type if inexact, else the default float) and the endpoints
    cast to the inexact type the computation runs in."""
    if dtype is None:
        dt = result_type(start, stop)[0]
        dtype = dt if dtypes.is_inexact(dt) else dtypes.default_float()
    else:
        dtype = dtypes.to_dtype(dtype)
    computation = dtype if dtypes.is_inexact(dtype) else dtypes.default_float()
    start, stop = ensure_arraylike(name, start, stop)
    return start.astype(computation), stop.astype(computation), dtype, computation


def _logspace_impl(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    start, stop, dtype, computation = _space_endpoints("logspace", start, stop, dtype)
    lin = linspace(start, stop, num, endpoint=endpoint, retstep=False, dtype=None, axis=axis)
    return lax.convert_element_type(power(base, lin), dtype)


_logspace = jit_named(_logspace_impl, "_logspace", ("num", "endpoint", "dtype", "axis"))


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return _logspace(start, stop, operator.index(num), endpoint, base, dtype, operator.index(axis))


def _geomspace_impl(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop, dtype, computation = _space_endpoints("geomspace", start, stop, dtype)
    sign_ = sign(start)
    log10 = ufuncs["log10"]
    res = sign_ * logspace(log10(start / sign_), log10(stop / sign_), num, endpoint=endpoint,
                           base=10.0, dtype=computation, axis=0)
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return lax.convert_element_type(res, dtype)


_geomspace = jit_named(_geomspace_impl, "_geomspace", ("num", "endpoint", "dtype", "axis"))


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return _geomspace(start, stop, operator.index(num), endpoint, dtype, operator.index(axis))


def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to (ints or sequences of ints)."""
    if not shapes:
        return ()
    return tuple(_bs(*(tuple(s) if np.ndim(s) else (int(s),) for s in shapes)))
