"""Dtypes, their short names, canonicalization (the x64 switch) and JAX's
type-promotion lattice with weak types."""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from .config import config

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
bfloat16 = np.dtype(ml_dtypes.bfloat16)
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

ALL_DTYPES = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64, complex64, complex128)

_SHORT = {bool_: "bool", int8: "i8", int16: "i16", int32: "i32", int64: "i64",
          uint8: "u8", uint16: "u16", uint32: "u32", uint64: "u64",
          float16: "f16", bfloat16: "bf16", float32: "f32", float64: "f64",
          complex64: "c64", complex128: "c128"}


def short_name(dtype) -> str:
    return _SHORT.get(dtype) or str(dtype)  # extended dtypes print as themselves: key<fry>


def is_float(dtype) -> bool:
    return dtype in (float16, bfloat16, float32, float64)


def is_complex(dtype) -> bool:
    return dtype in (complex64, complex128)


def is_inexact(dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


def is_signed_int(dtype) -> bool:
    return dtype in (int8, int16, int32, int64)


def is_unsigned_int(dtype) -> bool:
    return dtype in (uint8, uint16, uint32, uint64)


def is_int(dtype) -> bool:
    return is_signed_int(dtype) or is_unsigned_int(dtype)


def is_bool(dtype) -> bool:
    return dtype == bool_


def finfo(dtype):
    return ml_dtypes.finfo(dtype) if dtype == bfloat16 else np.finfo(dtype)


def iinfo(dtype):
    return np.iinfo(dtype)


# --- canonicalization ------------------------------------------------------

_NARROW = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


def canonicalize(dtype) -> np.dtype:
    """The dtype a request for ``dtype`` yields under the current x64 flag."""
    if isinstance(dtype, ExtendedDType):
        return dtype
    dtype = np.dtype(dtype)
    if not config.enable_x64:
        return _NARROW.get(dtype, dtype)
    return dtype


def default_int() -> np.dtype:
    return int64 if config.enable_x64 else int32


def default_uint() -> np.dtype:
    return uint64 if config.enable_x64 else uint32


def default_float() -> np.dtype:
    return float64 if config.enable_x64 else float32


def default_complex() -> np.dtype:
    return complex128 if config.enable_x64 else complex64


def to_dtype(dtype_like) -> np.dtype:
    """``np.dtype`` of a user's dtype spec, with Python types mapped as JAX does."""
    if dtype_like is float:
        return default_float()
    if dtype_like is int:
        return default_int()
    if dtype_like is complex:
        return default_complex()
    if dtype_like is bool:
        return bool_
    return canonicalize(np.dtype(dtype_like))


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
    _F: [float16, bfloat16, _C],
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
def _lub(nodes: tuple):
    common = frozenset.intersection(*(_UB[n] for n in nodes))
    for candidate in common:
        if _UB[candidate] == common:
            return candidate
    raise TypeError(f"no common promotion type for {nodes}")


def result_type_of(*typed) -> tuple[np.dtype, bool]:
    """``(dtype, weak_type)`` that JAX's lattice gives for ``(dtype, weak)`` pairs."""
    nodes = tuple(dict.fromkeys(_node(canonicalize(d), w) for d, w in typed))
    node = nodes[0] if len(nodes) == 1 else _lub(nodes)
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
    """The dtype of a tangent (or cotangent) of a value of ``dtype``."""
    return dtype if not isinstance(dtype, ExtendedDType) and is_inexact(dtype) else float0


class ExtendedDType:
    """A dtype NumPy lacks, stored as a physical array: typed PRNG keys (``key<fry>``).

    A value of shape ``s`` is stored as ``s + physical_shape`` elements of
    ``physical_dtype``; the aval (and so the jit cache key) carries the extended
    dtype itself.
    """

    __slots__ = ("name", "physical_shape", "physical_dtype", "impl")

    def __init__(self, name: str, physical_shape, physical_dtype, impl=None):
        self.name = name
        self.physical_shape = tuple(physical_shape)
        self.physical_dtype = np.dtype(physical_dtype)
        self.impl = impl

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, ExtendedDType) and other.name == self.name

    def __hash__(self):
        return hash(("ExtendedDType", self.name))

    @property
    def itemsize(self):
        return int(np.prod(self.physical_shape)) * self.physical_dtype.itemsize

    kind = "V"


def is_extended(dtype) -> bool:
    return isinstance(dtype, ExtendedDType)
