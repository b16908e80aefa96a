"""The operations of JAX's ``lax.py`` outside traxla's families of primitives: ``dtype``,
``shape_as_value``, ``stage`` (the identity that lifts a value into the current trace),
``dce_sink`` (keeps a value alive against dead-code elimination), ``empty`` (an array of
unspecified values: zeros on CPU), and the XLA tokens ``create_token`` and ``after_all``."""
from __future__ import annotations

import warnings

import numpy as np

from traxla import tree_util as _tree_util
from traxla.ir import dtypes, shape_poly as _shape_poly
from traxla.ir.rules.export import dim_as_value_p as _dim_as_value_p
from traxla.ir.rules.optimization import dce_sink_p, stage_p
from traxla.ir.rules.shape import empty_p
from traxla.ir.rules.tokens import after_all_p, create_token_p
from traxla.lax import (_type_sharding, concatenate, convert_element_type, expand_dims,
                        full)
from traxla.runtime import Array as _Array
from traxla.tracer import Tracer as _Tracer, staging as _staging

__all__ = ["after_all", "create_token", "dce_sink", "dtype", "empty", "shape_as_value",
           "stage"]


def dtype(x):
    """Return the dtype object for a value or type. Python scalars and their types, NumPy
    scalar types, dtypes and non-traxla arrays have their dtypes canonicalized (an explicit
    64-bit request without x64 warns); traxla arrays and tracers keep theirs."""
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type):
        if x in (bool, int, float, complex):
            return dtypes.to_dtype(x)
        if issubclass(x, np.generic):
            return _explicit_dtype(np.dtype(x), x)
    elif type(x) in (bool, int, float, complex):
        return dtypes.to_dtype(type(x))
    elif isinstance(x, (_Array, _Tracer)):
        return x.dtype
    if isinstance(x, (str, np.dtype)):
        return _explicit_dtype(np.dtype(x), x)
    dt = getattr(x, "dtype", None)
    if not isinstance(dt, (np.dtype, dtypes.ExtendedDType)):
        try:
            dt = np.result_type(x)
        except TypeError as err:
            raise TypeError(f"Cannot determine dtype of {x}") from err
    _check_jax_dtype(x, dt)
    return dtypes.canonicalize(dt)


def _check_jax_dtype(x, dt):
    if not dtypes.is_valid_array_dtype(dt):
        raise TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. Only "
                        "arrays of numeric types are supported by JAX.")


def _explicit_dtype(dt, x):
    _check_jax_dtype(x, dt)
    out = dtypes.canonicalize(dt)
    if out != dt:
        warnings.warn(dtypes._X64_WARNING.format(dt, " requested in dtype", out.name),
                      stacklevel=3)
    return out


def shape_as_value(shape):
    """Converts a shape that may contain symbolic dimensions into a value: a NumPy array
    for a constant shape (int64 when a dimension exceeds int32), traced for a symbolic one."""
    signed_max = np.iinfo(np.int32).max
    if not _shape_poly.is_constant_shape(shape):
        idx = dtypes.default_int()
    else:
        idx = dtypes.int64 if any(d > signed_max for d in shape) else dtypes.int32
    if len(shape) == 0:
        return full((0,), np.array(0, dtype=idx))
    if _shape_poly.is_constant_shape(shape):
        return np.asarray(shape, dtype=idx)
    dims = [expand_dims(convert_element_type(
        d if not _shape_poly.is_symbolic(d) else _dim_as_value_p.bind(dim=d), idx), (0,))
        for d in shape]
    return concatenate(dims, dimension=0)


# Staging forwards ``stage``'s operand (no equation), as JAX's ``trace.stage_value``.
_staging.forwarding_rules[stage_p] = lambda eqn: ([0], None)


def stage(x, /):
    """Lifts a value into a trace: the identity on a traced value; a Python scalar or NumPy
    array becomes a value of the current trace (an array outside any trace)."""
    return stage_p.bind(x)


def dce_sink(val, *, prevent_mlir_dce: bool = False):
    """Marks every leaf of ``val`` as used, so that dead-code elimination keeps what
    computes it (with ``prevent_mlir_dce``, also in the lowered module)."""
    _tree_util.tree_map(lambda leaf: dce_sink_p.bind(leaf, prevent_mlir_dce=prevent_mlir_dce),
                        val)


def empty(shape, dtype, *, out_sharding=None):
    """Create an array of possibly uninitialized values (zeros on CPU, as JAX)."""
    if out_sharding is not None:
        ndim = 1 if isinstance(shape, int) else len(shape)
        out_sharding = _type_sharding(out_sharding, ndim)
    return empty_p.bind(shape=shape, dtype=dtype, out_sharding=out_sharding)


def create_token(_=None):
    """Creates an XLA token value with no preconditions for sequencing effects.
    Experimental. The argument is ignored (it exists for backward compatibility)."""
    return create_token_p.bind()


def after_all(*operands):
    """Merges one or more XLA token values. Experimental. (XLA's AfterAll.)"""
    return after_all_p.bind(*operands)
