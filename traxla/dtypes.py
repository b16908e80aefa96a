"""``traxla.dtypes``: dtype utilities as ``jax.dtypes`` has them: the promotion
lattice's ``result_type``, canonicalization under the x64 switch, ``issubdtype`` that
knows bfloat16 and PRNG key dtypes, ``float0`` and ``TypePromotionError``."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from traxla.errors import TypePromotionError
from traxla.ir import dtypes as _d
from traxla.ir.dtypes import ExtendedDType, extended, float0, prng_key

bfloat16 = ml_dtypes.bfloat16
iinfo = ml_dtypes.iinfo
finfo = ml_dtypes.finfo


_PY_WEAK = {int: _d.default_int, float: _d.default_float, complex: _d.default_complex}


def canonicalize_dtype(dtype, allow_extended_dtype: bool = False):
    """The dtype a request for ``dtype`` yields under the current x64 setting."""
    if isinstance(dtype, ExtendedDType):
        if not allow_extended_dtype:
            raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} "
                             "with allow_extended_dtype=False")
        return dtype
    return _d.canonicalize(np.dtype(dtype))


def _issubclass(a, b) -> bool:
    try:
        return issubclass(a, b)
    except TypeError:
        return False


def issubdtype(a, b) -> bool:
    """``np.issubdtype`` that also handles extended dtypes (PRNG keys sit under
    ``extended``/``prng_key``/``np.generic``) and places bfloat16, float8 & co under
    ``np.floating`` and int4 & co under ``np.(un)signedinteger``, as JAX's."""
    a = a if isinstance(a, _DTYPE_TYPES) else np.dtype(a)
    b = b if isinstance(b, _DTYPE_TYPES) else np.dtype(b)
    if isinstance(b, type) and _issubclass(b, extended):
        if isinstance(a, ExtendedDType):
            return _issubclass(a.type, b)
        if isinstance(a, type) and _issubclass(a, np.generic):
            return _issubclass(a, b)
        return _issubclass(np.dtype(a).type, b)
    if isinstance(b, ExtendedDType):
        return isinstance(a, ExtendedDType) and a == b
    if isinstance(a, ExtendedDType):
        a = a.type
    a_type = a if isinstance(a, type) and _issubclass(a, np.generic) else np.dtype(a).type
    b_type = b if isinstance(b, type) and _issubclass(b, np.generic) else np.dtype(b).type
    if a_type in _CUSTOM_FLOATS:
        return b_type in {a_type, np.floating, np.inexact, np.number, np.generic}
    if a_type in _CUSTOM_SIGNED:
        return b_type in {a_type, np.signedinteger, np.integer, np.number, np.generic}
    if a_type in _CUSTOM_UNSIGNED:
        return b_type in {a_type, np.unsignedinteger, np.integer, np.number, np.generic}
    return bool(np.issubdtype(a_type, b_type))


_DTYPE_TYPES = (type, np.dtype, ExtendedDType)
_CUSTOM_FLOATS = frozenset(getattr(ml_dtypes, n) for n in (
    "bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz"))
_CUSTOM_SIGNED = frozenset((ml_dtypes.int1, ml_dtypes.int2, ml_dtypes.int4))
_CUSTOM_UNSIGNED = frozenset((ml_dtypes.uint1, ml_dtypes.uint2, ml_dtypes.uint4))


def _dtype_and_weak(x):
    if x is None:
        return _d.default_float(), False
    if isinstance(x, type) and x in _PY_WEAK:
        return _PY_WEAK[x](), True
    if type(x) in _d.PYTHON_SCALARS:
        return _d.python_scalar_dtype(x), type(x) is not bool
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.dtype, aval.weak_type
    if isinstance(x, ExtendedDType):
        return x, False
    if isinstance(x, (type, str, np.dtype)):
        return np.dtype(x), False
    if hasattr(x, "dtype"):
        return (x.dtype if isinstance(x.dtype, ExtendedDType) else np.dtype(x.dtype)), False
    return np.dtype(x), False


def result_type(*args, return_weak_type_flag: bool = False):
    """The dtype JAX's promotion lattice gives ``args`` (arrays, scalars or dtypes);
    with ``return_weak_type_flag=True``, ``(dtype, weak_type)``."""
    if len(args) == 0:
        raise ValueError("at least one array or dtype is required")
    dtype, weak = _d.result_type_of(*(_dtype_and_weak(a) for a in args))
    return (dtype, weak) if return_weak_type_flag else dtype


def scalar_type_of(x) -> type:
    """The Python scalar type (bool, int, float, complex) of ``x``'s dtype."""
    dtype = _dtype_and_weak(x)[0]
    if isinstance(dtype, ExtendedDType):
        raise TypeError(f"Invalid scalar value {x}")
    if dtype == np.dtype(bool):
        return bool
    if issubdtype(dtype, np.integer):
        return int
    if issubdtype(dtype, np.floating):
        return float
    if issubdtype(dtype, np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x}")


def itemsize_bits(dtype) -> int:
    """Bits per element of ``dtype`` (8 for bool, as it is stored)."""
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    if isinstance(dtype, ExtendedDType):
        return dtype.itemsize * 8
    dtype = np.dtype(dtype)
    if dtype == np.dtype(bool):
        return 8
    if issubdtype(dtype, np.integer):
        return iinfo(dtype).bits
    if issubdtype(dtype, np.floating):
        return finfo(dtype).bits
    if issubdtype(dtype, np.complexfloating):
        return 2 * finfo(dtype).bits
    raise ValueError(f"unexpected input: {dtype=}")


__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]
