"""NumPy-style dtype promotion (JAX's lattice, weak types) and rank promotion."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir import dtypes
from ..lax import _convert_element_type, aval_of, asarray, broadcast_to_rank

_PY_SCALARS = (bool, int, float, complex)


def check_arraylike(fun_name: str, *args):
    for i, a in enumerate(args):
        if not _is_arraylike(a):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                            f"position {i}.")


def _is_arraylike(x) -> bool:
    return (type(x) in _PY_SCALARS or isinstance(x, (np.ndarray, np.generic))
            or hasattr(x, "aval"))


def typed(x):
    """(dtype, weak_type) of an array-like."""
    if type(x) in _PY_SCALARS:
        return dtypes.python_scalar_dtype(x), True
    aval = aval_of(x)
    return aval.dtype, aval.weak_type


def result_type(*args):
    return dtypes.result_type_of(*(typed(a) for a in args))


def _same_typed_arrays(args):
    """All operands tracers/Arrays of one (dtype, weak type): nothing to convert (the
    common case inside traced code, checked without computing a promotion)."""
    first = getattr(args[0], "aval", None)
    if first is None or type(args[0]) in _PY_SCALARS:
        return False
    for a in args[1:]:
        aval = getattr(a, "aval", None)
        if aval is None or aval.dtype != first.dtype or aval.weak_type != first.weak_type:
            return False
    # (weak booleans, from comparisons of weak operands, promote to strong bool as in JAX)
    return not dtypes.is_extended(first.dtype) and not (first.weak_type
                                                         and dtypes.is_bool(first.dtype))


def check_python_ints(args):
    """A Python int argument must fit the default int (int32 without x64), whatever it meets:
    JAX parses it as a weakly typed int argument of a jitted function, so ``i32 + 2**40``
    and even ``f32 + 2**40`` raise instead of wrapping silently."""
    for i, a in enumerate(args):
        if type(a) is int:
            info = np.iinfo(dtypes.default_int())
            if not info.min <= a <= info.max:
                path = ("x", "y")[i] if len(args) == 2 else f"args[{i}]"
                raise OverflowError(
                    "An overflow was encountered while parsing an argument to a jitted "
                    f"computation, whose argument path is {path}. Got {type(a)} with value {a}")


def promote_dtypes(*args):
    if len(args) < 2:
        check_python_ints(args)
        return [asarray(a) for a in args]
    if _same_typed_arrays(args):
        return list(args)
    check_python_ints(args)
    dtype, weak = result_type(*args)
    return [_convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args):
    if _same_typed_arrays(args) and dtypes.is_inexact(args[0].aval.dtype):
        return list(args)
    check_python_ints(args)
    dtype, weak = result_type(*args)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [_convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    check_python_ints(args)
    dtype, weak = result_type(*args)
    if dtypes.is_bool(dtype):
        dtype = dtypes.default_int()
    return [_convert_element_type(a, dtype, weak) for a in args]


def asarray_scalar(x):
    """Python scalars become weakly typed constants; everything else passes."""
    if type(x) in _PY_SCALARS:
        return _convert_element_type(x, dtypes.python_scalar_dtype(x), True)
    if isinstance(x, (np.ndarray, np.generic)):
        d = dtypes.canonicalize(x.dtype)
        return np.asarray(x, d)
    return x


def broadcast_shapes(*shapes):
    shapes = [tuple(s) for s in shapes]
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for dims in zip(*[(1,) * (ndim - len(s)) + s for s in shapes]):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def promote_shapes(fun_name: str, *args):
    """NumPy rank promotion: leading unit dimensions for lower-rank operands (scalars
    are left to lax's scalar broadcasting)."""
    if len(args) < 2:
        return [asarray(a) for a in args]
    shapes = [tuple(np.shape(a)) if not hasattr(a, "aval") else tuple(a.aval.shape) for a in args]
    if all(len(shapes[0]) == len(s) for s in shapes[1:]):
        return [asarray(a) for a in args]
    if len({len(s) for s in shapes if s}) < 2:
        return [asarray(a) for a in args]
    rank = len(broadcast_shapes(*shapes))
    return [broadcast_to_rank(a, rank) for a in args]


def promote_args(fun_name: str, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


del lax


def ensure_arraylike(fun_name: str, *args):
    """JAX's ``util.ensure_arraylike``: checks, then NumPy inputs become (device) arrays;
    Python scalars become weakly typed constants. One argument -> one value."""
    check_arraylike(fun_name, *args)
    from ..lax import asarray as lax_asarray
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            from ._creation import asarray as jnp_asarray
            out.append(jnp_asarray(a))
        else:
            out.append(_lift(lax_asarray(a)))
    return out[0] if len(out) == 1 else out


def _lift(x):
    from ..lax import _lift as lift
    return lift(x)


def promote_args_inexact_arrays(fun_name: str, *args):
    """``promote_args_inexact`` whose scalar results are arrays (as JAX's are), so that
    ported code can apply Python operators to them."""
    return [_lift(a) for a in promote_args_inexact(fun_name, *args)]
