"""Dtypes, their short names, canonicalization (the x64 switch) and JAX's
type-promotion lattice with weak types."""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

import warnings

from traxla.ir.config import config
from traxla.errors import TypePromotionError

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
# 8- and 4-bit floats (ml_dtypes): storage types for quantized matmuls. In JAX's lattice
# each sits alone above the weak float: it never promotes with another typed dtype.
SMALL_FLOATS = tuple(np.dtype(getattr(ml_dtypes, name)) for name in (
    "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"))

ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64, complex64, complex128)

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
          float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
          complex64: "c64", complex128: "c128",
          **{t: t.name.replace("float", "f") for t in SMALL_FLOATS}}


def short_name(dtype) -> str:
    return _SHORT.get(dtype) or str(dtype)  # extended dtypes print as themselves: key<fry>


# Category tests are set lookups: they run for every traced operation.
_FLOATS = frozenset((float16, bfloat16, float32, float64, *SMALL_FLOATS))
_COMPLEX = frozenset((complex64, complex128))
_INEXACT = _FLOATS | _COMPLEX
_SIGNED = frozenset((int8, int16, int32, int64))
_UNSIGNED = frozenset((uint8, uint16, uint32, uint64))
_INTS = _SIGNED | _UNSIGNED


def _member(category):
    def test(dtype) -> bool:
        try:
            return dtype in category
        except TypeError:  # an unhashable dtype-like
            return np.dtype(dtype) in category
    return test


is_float = _member(_FLOATS)
is_complex = _member(_COMPLEX)
is_inexact = _member(_INEXACT)
is_signed_int = _member(_SIGNED)
is_unsigned_int = _member(_UNSIGNED)
is_int = _member(_INTS)


def is_bool(dtype) -> bool:
    return dtype == bool_


def finfo(dtype):
    return (ml_dtypes.finfo(dtype) if dtype == bfloat16 or dtype in SMALL_FLOATS
            else np.finfo(dtype))


def iinfo(dtype):
    return np.iinfo(dtype)


# --- canonicalization ------------------------------------------------------
# The calling thread's flags (x64, dtype promotion): every traced operation reads them.
_flags = config.current

_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


_canonical: dict = {}


def canonicalize(dtype) -> np.dtype:
    """The dtype a request for ``dtype`` yields under the current x64 flag."""
    key = (dtype, _flags.enable_x64)
    try:
        return _canonical[key]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, ExtendedDType):
        return dtype
    out = np.dtype(dtype)
    if not _flags.enable_x64:
        out = _NARROW.get(out, out)
    try:
        _canonical[key] = out
    except TypeError:
        pass
    return out


def default_int() -> np.dtype:
    return int64 if _flags.enable_x64 else int32


def default_uint() -> np.dtype:
    return uint64 if _flags.enable_x64 else uint32


def default_float() -> np.dtype:
    return float64 if _flags.enable_x64 else float32


def default_complex() -> np.dtype:
    return complex128 if _flags.enable_x64 else complex64


def to_dtype(dtype_like) -> np.dtype:
    """``np.dtype`` of a user's dtype spec, with Python types mapped as JAX does."""
    if isinstance(dtype_like, np.dtype):  # the common case: already a dtype
        return canonicalize(dtype_like)
    if dtype_like is float:
        return default_float()
    if dtype_like is int:
        return default_int()
    if dtype_like is complex:
        return default_complex()
    if dtype_like is bool:
        return bool_
    if isinstance(dtype_like, ExtendedDType):  # a key dtype: itself
        return dtype_like
    return canonicalize(_np_dtype(dtype_like))


def _np_dtype(dtype_like) -> np.dtype:
    """``np.dtype(dtype_like)``; a scalar type carrying its dtype (``jnp.float32``, whose
    class compares as NumPy's in Python code, slow for NumPy to look up) read directly."""
    if isinstance(dtype_like, type) and isinstance(d := getattr(dtype_like, "dtype", None),
                                                   np.dtype):
        return d
    return np.dtype(dtype_like)


def is_valid_array_dtype(dtype) -> bool:
    """Whether NumPy data of this dtype can become an array: numbers, bools and the ML
    dtypes; not objects, strings, dates or structured records (float0 aside)."""
    if isinstance(dtype, ExtendedDType):
        return True
    dtype = np.dtype(dtype)
    if dtype.kind in "OUSMm":
        return False
    return dtype.kind != "V" or dtype.names is None or dtype.names == ("float0",)


def check_valid_array_dtype(value, dtype) -> None:
    if not is_valid_array_dtype(dtype):
        raise TypeError(f"Value {value!r} with dtype {dtype} is not a valid JAX array type. "
                        "Only arrays of numeric types are supported by JAX.")


_X64_WARNING = ("Explicitly requested dtype {}{} is not available, and will be truncated to "
                "dtype {}. To enable more dtypes, set the jax_enable_x64 configuration option "
                "or the JAX_ENABLE_X64 shell environment variable. See "
                "https://github.com/jax-ml/jax#current-gotchas for more.")


def check_user_dtype(dtype_like, fun_name: str = "") -> np.dtype:
    """``to_dtype`` for a dtype the user asked for explicitly: a 64-bit request without x64
    warns, as JAX does, that it is truncated (instead of narrowing silently)."""
    out = to_dtype(dtype_like)
    if (dtype_like is float or dtype_like is int or dtype_like is complex or dtype_like is bool
            or isinstance(dtype_like, ExtendedDType)):
        return out
    try:
        requested = _np_dtype(dtype_like)
    except TypeError:
        return out
    if requested != out:
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(_X64_WARNING.format(requested, where, out.name), stacklevel=4)
    return out


# --- promotion lattice -----------------------------------------------------
# Nodes are dtypes plus three weak categories: a Python int, float or complex
# (or a weakly typed array) participates as 'i*', 'f*' or 'c*' and adopts the
# width of the typed operand it meets.

_I, _F, _C = "i*", "f*", "c*"

_EDGES = {
    bool_: [_I],
    _I: [uint8, int8],
    uint8: [int16, uint16], uint16: [int32, uint32], uint32: [int64, uint64], uint64: [_F],
    int8: [int16], int16: [int32], int32: [int64], int64: [_F],
    _F: [float16, bfloat16, _C, *SMALL_FLOATS],
    **{t: [] for t in SMALL_FLOATS},
    float16: [float32], bfloat16: [float32], float32: [float64, complex64], float64: [complex128],
    _C: [complex64], complex64: [complex128], complex128: [],
}


def _upper_bounds():
    bounds = {}
    for node in _EDGES:
        seen, stack = {node}, [node]
        while stack:
            for nxt in _EDGES[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        bounds[node] = frozenset(seen)
    return bounds


_UB = _upper_bounds()

# ``numpy_dtype_promotion='strict'``: only weak types promote (an ``i*`` adopts any int,
# float or complex width, an ``f*`` any float or complex, a ``c*`` any complex); two
# different typed dtypes have no common type, as in JAX's strict lattice.
_STRICT_UB = {node: frozenset([node]) for node in _UB}
_STRICT_UB[_C] = frozenset([_C, complex64, complex128])
_STRICT_UB[_F] = _STRICT_UB[_C] | {_F, float16, bfloat16, float32, float64, *SMALL_FLOATS}
_STRICT_UB[_I] = _STRICT_UB[_F] | {_I, int8, int16, int32, int64, uint8, uint16, uint32, uint64}



def _node(dtype, weak: bool):
    if weak:
        if is_bool(dtype):
            return bool_
        if is_int(dtype):
            return _I
        if is_float(dtype):
            return _F
        return _C
    return dtype


@functools.lru_cache(maxsize=4096)
def _lub(nodes: tuple, mode: str = "standard"):
    bounds = _STRICT_UB if mode == "strict" else _UB
    common = frozenset.intersection(*(bounds[n] for n in nodes))
    for candidate in common:
        if bounds[candidate] == common:
            return candidate
    if mode == "strict":
        raise TypePromotionError(
            f"Input dtypes {tuple(_node_name(n) for n in nodes)} have no available implicit "
            "dtype promotion path when jax_numpy_dtype_promotion=strict. Try explicitly casting "
            "inputs to the desired output type, or set jax_numpy_dtype_promotion=standard.")
    raise TypeError(f"no common promotion type for {nodes}")


def _node_name(node) -> str:
    """As JAX names lattice nodes in its errors: weak types by their Python type."""
    return {_I: "<class 'int'>", _F: "<class 'float'>", _C: "<class 'complex'>"}.get(
        node, str(node))


def result_type_of(*typed) -> tuple[np.dtype, bool]:
    """``(dtype, weak_type)`` that JAX's lattice gives for ``(dtype, weak)`` pairs."""
    key = (typed, _flags.enable_x64, _flags.numpy_dtype_promotion)
    try:
        return _result_cache[key]
    except (KeyError, TypeError):
        pass
    out = _result_type_of(typed)
    try:
        _result_cache[key] = out
    except TypeError:
        pass
    return out


_result_cache: dict = {}


def _result_type_of(typed):
    extended = [d for d, _ in typed if isinstance(d, ExtendedDType)]
    if extended and all(d == extended[0] for d, _ in typed):
        return extended[0], False  # keys combine with keys (stack, concatenate, where)
    if extended:  # as JAX's lattice: keys have no place in it
        raise ValueError(f"dtype={extended[0]} is not a valid dtype for JAX type promotion.")
    nodes = tuple(dict.fromkeys(_node(canonicalize(d), w) for d, w in typed))
    node = nodes[0] if len(nodes) == 1 else _lub(nodes, _flags.numpy_dtype_promotion)
    if node == _I:
        return default_int(), True
    if node == _F:
        return default_float(), True
    if node == _C:
        return default_complex(), True
    return canonicalize(node), False


def python_scalar_dtype(x) -> np.dtype:
    """The (weak) dtype JAX gives a Python scalar."""
    if isinstance(x, bool):
        return bool_
    if isinstance(x, int):
        return default_int()
    if isinstance(x, float):
        return default_float()
    if isinstance(x, complex):
        return default_complex()
    raise TypeError(f"not a Python scalar: {type(x)}")


PYTHON_SCALARS = (bool, int, float, complex)


# The tangent dtype of integer and boolean values: zero bytes per element.
float0 = np.dtype([("float0", np.void, 0)])
_SHORT[float0] = "float0"


def tangent_dtype(dtype):
    """The dtype of a tangent (or cotangent) of a value of ``dtype`` (an extended dtype
    with type rules of its own says what its tangents are, as in JAX)."""
    if isinstance(dtype, ExtendedDType):
        rules = getattr(dtype, "_rules", None)
        return rules.tangent_dtype(dtype) if rules is not None else float0
    return dtype if is_inexact(dtype) else float0


class extended(np.generic):
    """Abstract scalar class of extended dtypes, for ``issubdtype(key.dtype, extended)``."""


class prng_key(extended):
    """Abstract scalar class of PRNG key dtypes, for ``issubdtype(key.dtype, prng_key)``."""


extended.__module__ = prng_key.__module__ = "traxla.dtypes"


class ExtendedDType:
    """A dtype NumPy lacks, stored as a physical array: typed PRNG keys (``key<fry>``).

    A value of shape ``s`` is stored as ``s + physical_shape`` elements of
    ``physical_dtype``; the aval (and so the jit cache key) carries the extended
    dtype itself.

    A library's own extended dtype (flax's ``fp8_meta32``, a dataclass subclass) sets
    none of these: its type rules (``_rules``, JAX's protocol) give its element's
    physical type (``physical_element_aval``), its conversions (``convert_to`` /
    ``convert_from``), its tangent dtype, zero, sum and ``full``.
    """

    __slots__ = ("name", "_physical_shape", "_physical_dtype", "impl")
    _rules = None  # a library's extended dtype: its type rules (see above)

    def __init__(self, name: str, physical_shape, physical_dtype, impl=None):
        self.name = name
        self._physical_shape = tuple(physical_shape)
        self._physical_dtype = np.dtype(physical_dtype)
        self.impl = impl

    @property
    def physical_shape(self) -> tuple:
        try:
            return self._physical_shape
        except AttributeError:  # a library's dtype: from its rules (JAX's physical_element_aval)
            return tuple(self._rules.physical_element_aval(self).shape)

    @property
    def physical_dtype(self):
        try:
            return self._physical_dtype
        except AttributeError:
            return np.dtype(self._rules.physical_element_aval(self).dtype)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        # Keys of two PRNG implementations with one tag print alike (key<?>) yet differ.
        return (isinstance(other, ExtendedDType) and other.name == self.name
                and getattr(other, "impl", None) == getattr(self, "impl", None))

    def __hash__(self):
        return hash(("ExtendedDType", self.name))

    @property
    def itemsize(self):
        return int(np.prod(self.physical_shape)) * self.physical_dtype.itemsize

    @property
    def type(self):
        """The scalar class, as JAX's: ``prng_key`` for keys (in NumPy's scalar hierarchy
        under ``np.generic``, so ``issubdtype`` places keys there)."""
        return extended if self.impl is None else prng_key

    kind = "V"


def is_extended(dtype) -> bool:
    return isinstance(dtype, ExtendedDType)
