"""Primitives that steer XLA's optimizer rather than compute: ``reduce_precision``
(rounds to fewer exponent/mantissa bits; remat inserts it on saved residuals),
``optimization_barrier`` (its operands pass through unchanged, but XLA may not move
computation across it), ``stage`` (the identity that lifts a value into the current trace;
staging forwards it, as JAX's ``stage_value``) and ``dce_sink`` (no outputs: marks a value as
used, so dead-code elimination keeps what computes it)."""
from __future__ import annotations

import operator

from traxla.ir import dtypes
from traxla.ir.effects import Effect, def_effects
from traxla.ir.primitive import Primitive, def_typing

reduce_precision_p = Primitive("reduce_precision")
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)
stage_p = Primitive("stage")
dce_sink_p = Primitive("dce_sink", multiple_results=True)


class NoDCEEffect(Effect):
    """``dce_sink``'s effect: not ordered, it only keeps the equation (and its operand)."""
    name = "NoDCE"


no_dce_effect = NoDCEEffect()


def _reduce_precision_rule(x, *, exponent_bits, mantissa_bits):
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    if exponent_bits < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if mantissa_bits < 0:
        raise ValueError(f"reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"reduce_precision does not accept dtype {x.dtype.name}. Accepted "
                        "dtypes are subtypes of floating.")
    return x


def _optimization_barrier_rule(*avals):
    return list(avals)


def_typing(reduce_precision_p, _reduce_precision_rule)
def_typing(optimization_barrier_p, _optimization_barrier_rule)
def_typing(stage_p, lambda x: x)
def_typing(dce_sink_p, lambda x, *, prevent_mlir_dce: [])
def_effects(dce_sink_p, lambda params: frozenset({no_dce_effect}))
