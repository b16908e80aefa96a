"""``traxla.lax``'s value helpers: avals of arrays and host values, ``asarray``, constants,
and ``convert_element_type`` (which folds concrete scalars into literals)."""
from __future__ import annotations

import builtins
import math

import numpy as np

from traxla.ir import dtypes
from traxla.ir.jaxpr import Literal as _Literal, Literal, Var as _Var
from traxla.ir.rules.elementwise import P as _E
from traxla.tracer import Tracer, EvalTrace, current_trace
from traxla.tracer import staging as _staging
from traxla.tracer.staging import DynamicJaxprTracer as _DynamicJaxprTracer
from traxla.tracer.values import concrete_aval, is_concrete
from traxla.runtime.dispatch import to_array
from traxla.ir.avals import ShapedArray, interned as _interned
from traxla.ir.pytype_registry import user_aval_fn

convert_element_type_p = _E["convert_element_type"]


def aval_of(x):
    return x.aval if isinstance(x, Tracer) else concrete_aval(x)


def shape_of(x):
    return tuple((x.aval if isinstance(x, Tracer) else concrete_aval(x)).shape)


def dtype_of(x):
    return (x.aval if isinstance(x, Tracer) else concrete_aval(x)).dtype


def _is_array(x) -> bool:
    """JAX's ``isinstance(x, Array)``: tracers and device arrays, not host values."""
    # (on the type: a proxy such as flax's Variable forwards attribute reads)
    return isinstance(x, Tracer) or hasattr(type(x), "__traxla_array__")


def asarray(x):
    """``lax.asarray``: arrays pass; Python numbers become weakly typed constants,
    bools and NumPy values strongly typed ones."""
    if _is_array(x):
        return x
    if type(x) in (builtins.int, builtins.float, builtins.complex):
        return _convert_element_type(x, dtypes.python_scalar_dtype(x), True)
    if isinstance(x, (builtins.bool, np.ndarray, np.generic)):
        return _convert_element_type(x, dtypes.canonicalize(np.asarray(x).dtype), False)
    if isinstance(x, Literal):
        return x
    fn = user_aval_fn(type(x))  # a type registered in JAX's core.pytype_aval_mappings
    if fn is not None:
        aval = fn(x)
        return _convert_element_type(x, aval.dtype, aval.weak_type)
    m = getattr(x, "__jax_array__", None)  # JAX's protocol (flax's Variables use it)
    if m is not None:
        return asarray(m())
    raise TypeError(f"asarray: expected ArrayLike, got {x} of type {type(x)}.")


def _eager() -> bool:
    return type(current_trace()) is EvalTrace


def _lift(x):
    """Constants folded while tracing are ``Literal``s inside traxla; what a public
    function hands back to the user is an ``Array`` (as JAX returns a concrete array)."""
    if type(x) is _Literal or isinstance(x, (np.ndarray, np.generic)):
        # (a NumPy input handed back unchanged, e.g. jnp.abs of a bool, is an Array too)
        if getattr(x, "dtype", None) == dtypes.float0:  # float0 tangents stay NumPy, as in JAX
            return x
        return to_array(x)
    return x


def _const(example, val):
    """A constant ``val`` typed like ``example`` (a Python scalar stays a Python scalar)."""
    if type(example) in (builtins.bool, builtins.int, builtins.float, builtins.complex):
        return type(example)(val)
    aval = aval_of(example)
    dt = aval.dtype
    if aval.weak_type and not aval.shape:  # as JAX: a weak scalar's constant is a Python scalar
        py = (builtins.bool if dtypes.is_bool(dt) else builtins.complex if dtypes.is_complex(dt)
              else builtins.float if dtypes.is_float(dt) else builtins.int)(val)
        if dtypes.python_scalar_dtype(py) == dt:
            return py
    return Literal(np.array(val, dt), ShapedArray((), dt, False))

def convert_element_type(operand, new_dtype):
    return _lift(_convert_element_type(operand, dtypes.to_dtype(new_dtype), False))


# (Python scalar type, value[, sign of a zero], dtype, weak type) -> Literal: a traced
# ``x * 0.5`` folds the same scalar thousands of times. Bounded; Literals are immutable.
_scalar_literals: dict = {}


def _convert_element_type(operand, new_dtype, weak_type: bool):
    """Converts, folding conversions of concrete scalars into new constants (no equation)."""
    t = type(operand)
    if t is _DynamicJaxprTracer:  # a staged value already of this type (jnp's reductions
        aval = operand.aval       # convert to their computation type): itself, as below
        if aval.dtype == new_dtype and aval.weak_type == weak_type:
            return operand
        return _convert_element_type_uncached(operand, new_dtype, weak_type)
    if t is builtins.float or t is builtins.int:
        key = (t, operand, new_dtype, weak_type,
               t is builtins.float and operand == 0.0 and math.copysign(1.0, operand))
        hit = _scalar_literals.get(key)
        if hit is not None:
            return hit
        out = _convert_element_type_uncached(operand, new_dtype, weak_type)
        if type(out) is _Literal:
            if len(_scalar_literals) >= 4096:
                _scalar_literals.clear()
            # its type the interned one: typing caches keyed on aval identity hit at once
            out.aval = _interned(out.aval)
            _scalar_literals[key] = out
        return out
    return _convert_element_type_uncached(operand, new_dtype, weak_type)


def _convert_element_type_uncached(operand, new_dtype, weak_type: bool):
    aval = aval_of(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type and not isinstance(
            operand, (builtins.bool, builtins.int, builtins.float, builtins.complex)) and not (
            # as JAX: a concrete tracer (eager grad's, whose tangent may be weak where its
            # primal is not) is converted all the same, its tangent converted with it
            isinstance(operand, Tracer) and operand.to_concrete_value() is not None):
        if not (type(operand) is np.ndarray and operand.ndim and not _eager()):
            return operand
        # a NumPy array is bound even so, as in JAX: staged, it is the constant itself (the
        # conversion forwarded), one constvar however often it is converted
    if (dtypes.is_extended(aval.dtype) or dtypes.is_extended(new_dtype)) and aval.dtype != new_dtype:
        return _convert_extended(operand, aval.dtype, new_dtype)
    if (type(operand) in (builtins.int, builtins.float, builtins.complex) and weak_type
            and aval.dtype == new_dtype):
        # a Python scalar at its own weak dtype keeps its value, as JAX's literal does
        return Literal(operand, ShapedArray((), new_dtype, True))
    if (type(operand) is builtins.complex and not weak_type and np.isfinite(operand)
            and not dtypes.is_complex(new_dtype) and new_dtype != dtypes.float0):
        np.asarray(operand, dtype=new_dtype)  # raises NumPy's TypeError, as JAX does
    # (an Array's float -> integer conversion is XLA's, which saturates, as JAX binds it;
    # NumPy's would wrap: -1.5 -> uint8 is 0 in JAX, 254 in NumPy)
    xla_only = (hasattr(operand, "__traxla_array__") and dtypes.is_inexact(aval.dtype)
                and not dtypes.is_inexact(new_dtype))
    if is_concrete(operand) and not aval.shape and not xla_only:
        value = np.asarray(operand.val if isinstance(operand, Literal) else operand)
        if dtypes.is_complex(value.dtype) and not dtypes.is_complex(new_dtype):
            value = value.real
        literal = Literal(value.astype(new_dtype), ShapedArray((), new_dtype, weak_type))
        # An Array stays an Array when evaluating eagerly (a Literal is only for tracing).
        return _lift(literal) if hasattr(operand, "__traxla_array__") and _eager() else literal
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                       sharding=None)


def _convert_extended(operand, old_dtype, new_dtype):
    """JAX's conversions to and from an extended dtype: ``to_edtype`` / ``from_edtype``,
    which its type rules allow or refuse (a key's data only through random_wrap)."""
    if dtypes.is_extended(old_dtype) and dtypes.is_extended(new_dtype):
        old_rep, new_rep = old_dtype.physical_dtype, new_dtype.physical_dtype
        raise ValueError(
            f"cannot directly convert between extended dtypes: from {old_dtype} to "
            f"{new_dtype}. Instead, convert to and from their representation dtypes, e.g.:\n"
            f"{old_dtype} -> {old_rep} -> {new_rep} -> {new_dtype}")
    if dtypes.is_extended(new_dtype):
        return _E["to_edtype"].bind(operand, edtype=new_dtype)
    return _E["from_edtype"].bind(operand, dtype=dtypes.to_dtype(new_dtype))


def _convert_element_type_forwarding(eqn):
    # JAX's ``_convert_elt_type_fwd_rule``: a conversion to the operand's own type is no
    # equation, its result the operand
    operand = eqn.invars[0]
    params = eqn.params
    if (isinstance(operand, _Var) and operand.aval.dtype == params["new_dtype"]
            and operand.aval.weak_type == params["weak_type"]
            and params.get("sharding") in (None, operand.aval.sharding)):
        return [0], None
    return [None], eqn


_staging.forwarding_rules[convert_element_type_p] = _convert_element_type_forwarding


def bitcast_convert_type(operand, new_dtype):
    return _E["bitcast_convert_type"].bind(operand, new_dtype=dtypes.to_dtype(new_dtype))


def typed(x):
    """(dtype, weak_type) of an array-like."""
    if type(x) in (bool, int, float, complex):
        return dtypes.python_scalar_dtype(x), True
    aval = aval_of(x)
    return aval.dtype, aval.weak_type
