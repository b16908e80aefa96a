"""What counts as a concrete value, and its abstract value.

Concrete values are Python scalars (weakly typed, but for bool), NumPy arrays and scalars,
and objects that declare ``__traxla_array__`` (traxla's own ``Array``), so that
this stage need not import the runtime's class.
"""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.config import config
from traxla.ir.avals import ShapedArray, interned
from traxla.ir.shape_poly import DimExpr
from traxla.ir.jaxpr import Literal
from traxla.ir.literals import TypedNdArray
from traxla.ir.pytype_registry import user_aval_fn, value_handler_for

_PY_SCALARS = (bool, int, float, complex)

# Python type -> fn(value) -> its abstract value: the high-level (hijax) types registered
# with ``jax.experimental.hijax.register_hitype`` (flax's hijax Variables). Their values
# are Python objects; ``typeof`` asks the registered function.
hitype_avals: dict = {}


def is_concrete(x) -> bool:
    return (type(x) in _PY_SCALARS or isinstance(x, (np.ndarray, np.generic, Literal))
            or hasattr(type(x), "__traxla_array__")
            # a type of the user's registered with JAX's ``core.pytype_aval_mappings``
            or user_aval_fn(type(x)) is not None)


_flags = config.current
_ndarray_avals: dict = {}  # (dtype, shape, x64) -> the aval of such a NumPy array
_scalar_avals: dict = {}  # (Python scalar type, x64) -> its aval


def concrete_aval(x) -> ShapedArray:
    t = type(x)
    if t is np.ndarray:  # (a jit's NumPy arguments) one shared aval per dtype and shape
        key = (x.dtype, x.shape, _flags.enable_x64)  # canonicalization follows the x64 switch
        aval = _ndarray_avals.get(key)
        if aval is None:
            dtypes.check_valid_array_dtype(x, x.dtype)
            aval = ShapedArray(x.shape, dtypes.canonicalize(x.dtype), False)
            if len(_ndarray_avals) >= 1024 or dtypes.is_extended(aval.dtype):
                return aval
            _ndarray_avals[key] = aval
        return aval
    if t in _PY_SCALARS:
        # a Python bool is not weakly typed in JAX (only int, float and complex are); one
        # shared (interned) aval per scalar type and x64 switch
        key = (t, _flags.enable_x64)
        aval = _scalar_avals.get(key)
        if aval is None:
            aval = _scalar_avals[key] = interned(
                ShapedArray((), dtypes.python_scalar_dtype(x), t is not bool))
        return aval
    if t in hitype_avals:
        return hitype_avals[t](x)
    fn = user_aval_fn(t)  # JAX's ``core.pytype_aval_mappings`` (tfp's variable proxy)
    if fn is not None:
        return fn(x)
    # the type declares ``aval``: a proxy forwarding attribute reads is not an array
    aval = getattr(x, "aval", None) if hasattr(type(x), "aval") else None
    if aval is not None:
        return aval
    if isinstance(x, DimExpr):  # a symbolic dimension (export) used as a value: a weak int
        return ShapedArray((), dtypes.canonicalize(np.dtype(np.int64)), True)
    x = np.asarray(x)
    dtypes.check_valid_array_dtype(x, x.dtype)
    return ShapedArray(x.shape, dtypes.canonicalize(x.dtype), False)


def concrete_value(x):
    """A NumPy value of ``x`` in its canonical dtype (used for literals and transfers)."""
    if isinstance(x, Literal):
        return x.val
    t = type(x)
    if t in _PY_SCALARS:
        dtype = dtypes.python_scalar_dtype(x)
        if t is int:
            _check_int_range(x, dtype)
        return np.asarray(x, dtype)
    if hasattr(x, "__traxla_array__"):
        return np.asarray(x)
    if type(x) is TypedNdArray:  # typed already: never canonicalized (JAX's)
        return x
    handler = value_handler_for(t)  # JAX's ``canonicalize_value`` handlers
    x = np.asarray(x if handler is None else handler(x))
    canonical = dtypes.canonicalize(x.dtype)
    return x if canonical == x.dtype else x.astype(canonical)


def _check_int_range(x: int, dtype):
    info = np.iinfo(dtype)
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {dtype}")
