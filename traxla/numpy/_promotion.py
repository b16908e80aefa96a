"""NumPy-style dtype promotion (JAX's lattice, weak types) and rank promotion."""
from __future__ import annotations

import warnings

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.pytype_registry import user_aval_fn
from traxla.ir.rules.refs import is_ref_aval
from traxla.tracer.staging import DynamicJaxprTracer
from traxla.lax import (_convert_element_type, aval_of, _asarray as asarray, broadcast_to_rank, _asarray as
                        lax_asarray, _lift as lift)
from traxla.primitives.values import typed  # noqa: F401  (numpy modules import it from here)
import traxla.numpy._creation as _numpy__creation

_PY_SCALARS = (bool, int, float, complex)


def check_arraylike(fun_name: str, *args):
    for i, a in enumerate(args):
        if not _is_arraylike(a):
            # a ref reaches JAX's check through the function's jit: a staged tracer there
            kind = DynamicJaxprTracer if hasattr(a, "aval") else type(a)
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {kind} at "
                            f"position {i}.")


def check_for_prngkeys(fun_name: str, *args):
    """JAX's refusal of typed PRNG keys mixed with other dtypes, named for the function
    (operands of one key dtype go on to the dtype rules)."""
    arg_dtypes = [typed(a)[0] for a in args]
    if len(set(arg_dtypes)) < 2:
        return
    if any(dtypes.is_extended(d) for d in arg_dtypes):
        raise TypeError(f"{fun_name} does not accept dtypes {', '.join(map(str, arg_dtypes))}.")


def _is_arraylike(x) -> bool:
    return (type(x) in _PY_SCALARS or isinstance(x, (np.ndarray, np.generic))
            or (hasattr(type(x), "aval") and not is_ref_aval(x.aval))  # (array refs are not)
            or hasattr(x, "__jax_array__")
            # a type registered in JAX's core.pytype_aval_mappings (JAX's jitted numpy
            # functions take one as a jit argument)
            or user_aval_fn(type(x)) is not None)


def jax_array_protocol(args):
    """Objects with JAX's ``__jax_array__`` method as the arrays it returns."""
    return [a.__jax_array__() if not hasattr(type(a), "aval") and hasattr(a, "__jax_array__")
            else a for a in args]


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
    np.dtype(dtype)  # as JAX's to_inexact_dtype: "Cannot interpret 'key<fry>' as a data type"
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [_convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    check_python_ints(args)
    dtype, weak = result_type(*args)
    np.dtype(dtype)  # as JAX's to_numeric_dtype: refuses typed PRNG keys
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
    if dtypes._flags.numpy_rank_promotion != "allow":
        _rank_promotion_warning_or_error(fun_name, shapes)
    rank = len(broadcast_shapes(*shapes))
    return [broadcast_to_rank(a, rank) for a in args]


def _rank_promotion_warning_or_error(fun_name: str, shapes):
    """``jax_numpy_rank_promotion``'s 'warn' and 'raise', with JAX's messages."""
    shown = " ".join(map(str, shapes))
    if dtypes._flags.numpy_rank_promotion == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes "
                      f"{shown}. Set the jax_numpy_rank_promotion config option to 'allow' to "
                      "disable this warning; for more information, see "
                      "https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                      stacklevel=3)
    elif dtypes._flags.numpy_rank_promotion == "raise":
        raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                         f"{shown} and with the config option jax_numpy_rank_promotion='raise'. "
                         "For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


# -- fast path -----------------------------------------------------------------------
# Every traced ``x * 0.5`` and ``jnp.tanh(x)`` promotes; the general path above checks,
# computes a lattice join and converts operand by operand. The fast path handles the
# common operands, arrays with a plain ShapedArray (tracers, Arrays, literals) and Python
# scalars, needing no rank promotion, with the join cached per (dtype, weak type)
# signature. It returns None for anything else, which the general path then decides
# (including every error).
_PLAIN, _INEXACT, _NUMERIC = 0, 1, 2
_SCALAR_TYPES = frozenset(_PY_SCALARS)
INEXACT_DTYPES = frozenset(d for d in dtypes.ALL_DTYPES if dtypes.is_inexact(d))
_joins: dict = {}


def plain_aval(x):
    aval = getattr(x, "aval", None) if hasattr(type(x), "aval") else None
    if type(aval) is ShapedArray and type(aval.dtype) is not dtypes.ExtendedDType:
        return aval
    return None


def _join(mode, sig1, sig2):
    """The promoted (dtype, weak type) of two signatures: (dtype, weak) of an array or the
    type of a Python scalar; None where the general path must decide (an error)."""
    key = (mode, sig1, sig2, dtypes._flags.enable_x64, dtypes._flags.numpy_dtype_promotion)
    out = _joins.get(key)
    if out is None:
        typed = [(dtypes.python_scalar_dtype(sig()), True) if type(sig) is type else sig
                 for sig in (sig1, sig2)]
        try:
            dtype, weak = dtypes.result_type_of(*typed)
        except Exception:  # noqa: BLE001 - raised again, with context, by the general path
            return None
        if mode == _INEXACT and not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float()
        elif mode == _NUMERIC and dtypes.is_bool(dtype):
            dtype = dtypes.default_int()
        out = _joins[key] = (dtype, weak)
    return out


def _fast_signature(x):
    """``(aval, signature)`` of a Python scalar (no aval; the signature is its type) or of a
    plain array (its (dtype, weak type)); None where the general path must decide."""
    if type(x) in _SCALAR_TYPES:
        return None if type(x) is int and not _int_fits(x) else (None, type(x))
    a = plain_aval(x)
    return None if a is None else (a, (a.dtype, a.weak_type))


def _promote_pair(mode, x1, x2):
    s1 = _fast_signature(x1)
    s2 = None if s1 is None else _fast_signature(x2)
    if s2 is None:
        return None
    (a1, sig1), (a2, sig2) = s1, s2
    if a1 is None and a2 is None:
        return None
    rank = None
    if (a1 is not None and a2 is not None and a1.shape and a2.shape
            and len(a1.shape) != len(a2.shape)):
        # rank promotion (a bias added to a batch): as the general path, the dtypes joined,
        # then leading unit dimensions for the lower-rank operand
        if dtypes._flags.numpy_rank_promotion != "allow":
            return None  # (its warning or error: the general path)
        rank = len(broadcast_shapes(a1.shape, a2.shape))
    if a1 is not None and a2 is not None and sig1 == sig2 and (
            mode == _PLAIN and not (sig1[1] and dtypes.is_bool(sig1[0]))
            or mode == _INEXACT and sig1[0] in INEXACT_DTYPES):
        # two arrays of one type: nothing to convert (as _same_typed_arrays)
        if rank is None:
            return [x1, x2]
        return [broadcast_to_rank(x1, rank), broadcast_to_rank(x2, rank)]
    joined = _join(mode, sig1, sig2)
    if joined is None:
        return None
    if sig1 != joined:
        x1 = _convert_element_type(x1, *joined)
    if sig2 != joined:
        x2 = _convert_element_type(x2, *joined)
    if rank is None:
        return [x1, x2]
    return [broadcast_to_rank(x1, rank), broadcast_to_rank(x2, rank)]


def _int_fits(x) -> bool:
    info = np.iinfo(dtypes.default_int()) if dtypes._flags.enable_x64 else _INT32
    return info.min <= x <= info.max


_INT32 = np.iinfo(np.int32)


def _promote_one(mode, x):
    """One operand: an array of a plain dtype passes as it is (inexact: if inexact)."""
    aval = plain_aval(x)
    if aval is None or type(x) in _SCALAR_TYPES:
        return None
    if mode == _INEXACT and aval.dtype not in INEXACT_DTYPES:
        return None
    if mode == _NUMERIC and dtypes.is_bool(aval.dtype):
        return None
    return [x]


def _promote_args(mode, promote_dtypes_fn, fun_name, args, one_operand=True):
    """``promote_args*``: the fast path for one (where ``one_operand``) or two operands, else
    ``check_arraylike``, ``promote_dtypes_fn`` and rank promotion."""
    if len(args) == 2:
        fast = _promote_pair(mode, *args)
    elif len(args) == 1 and one_operand:
        fast = _promote_one(mode, args[0])
    else:
        fast = None
    if fast is not None:
        return fast
    args = jax_array_protocol(args)
    check_arraylike(fun_name, *args)
    check_for_prngkeys(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_fn(*args))


def promote_args(fun_name: str, *args):
    return _promote_args(_PLAIN, promote_dtypes, fun_name, args)


def promote_args_inexact(fun_name: str, *args):
    return _promote_args(_INEXACT, promote_dtypes_inexact, fun_name, args)


def promote_args_numeric(fun_name: str, *args):
    return _promote_args(_NUMERIC, promote_dtypes_numeric, fun_name, args, one_operand=False)


del lax


def ensure_arraylike(fun_name: str, *args):
    """JAX's ``util.ensure_arraylike``: checks, then NumPy inputs become (device) arrays;
    Python scalars become weakly typed constants. One argument -> one value."""
    check_arraylike(fun_name, *args)
    out = []
    for a in jax_array_protocol(args):
        if isinstance(a, np.ndarray):
            out.append(_numpy__creation.asarray(a))
        else:
            out.append(_lift(lax_asarray(a)))
    return out[0] if len(out) == 1 else out


def _lift(x):
    return lift(x)


def promote_args_inexact_arrays(fun_name: str, *args):
    """``promote_args_inexact`` whose scalar results are arrays (as JAX's are), so that
    ported code can apply Python operators to them."""
    return [_lift(a) for a in promote_args_inexact(fun_name, *args)]
