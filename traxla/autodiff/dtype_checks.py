"""The dtype and shape checks of ``grad``/``vjp``/``jacrev``'s inputs and outputs, with
JAX's messages (``_check_input_dtype_revderiv`` and its kin in JAX's api.py)."""
from __future__ import annotations

from traxla import primitives as prims
from traxla.ir import dtypes
from traxla.tracer import Tracer
from traxla.tracer.values import hitype_avals, is_concrete


def _is_array_like(x):
    return isinstance(x, Tracer) or (is_concrete(x) and type(x) is not str)


def check_input_dtype_revderiv(name, allow_int, x, holomorphic=False):
    """JAX's ``_check_input_dtype_revderiv``."""
    if getattr(x, "is_array_ref", False):  # a Ref's cotangent would be a Ref: JAX refuses
        raise ValueError(f"Expected cotangent type {x.aval} but got {x.aval.inner_aval}")
    if type(x) in hitype_avals:  # a high-level (hijax) value: its type says its tangents
        return
    if not _is_array_like(x):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")
    dt = prims.aval_of(x).dtype
    if holomorphic and not dtypes.is_complex(dt):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dt.name}.")
    if dtypes.is_int(dt) or dtypes.is_bool(dt) or dtypes.is_extended(dt):
        if not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
                f"of np.inexact), but got {dt.name}. If you want to use Boolean- or "
                "integer-valued inputs, use vjp or set allow_int to True.")
    elif not dtypes.is_inexact(dt):
        raise TypeError(f"{name} requires numerical-valued inputs (input dtype that is a "
                        f"sub-dtype of np.bool_ or np.number), but got {dt.name}.")


def check_output_dtype_revderiv(name, x, holomorphic=False):
    dt = prims.aval_of(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dt):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                            f"but got {dt.name}.")
        return
    if dtypes.is_complex(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly.")
    if not dtypes.is_float(dt):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}. For differentiation of functions with integer "
            "outputs, use jax.vjp directly.")


def _check_scalar(x):
    if not _is_array_like(x):
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was {x}.")
    shape = prims.aval_of(x).shape
    if shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: "
                        f"{shape}.")
