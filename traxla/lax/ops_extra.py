"""The rest of ``jax.lax``'s operations (issue #12): ``reduce_precision``,
``optimization_barrier``, ``mulhi``, ``reduce_xor``, ``rng_bit_generator``,
``rng_uniform``, ``broadcast_shapes``, ``DotAlgorithmPreset``, ``composite``."""
from __future__ import annotations

import operator

from .. import tree_util
from ..ir.rules.optimization import optimization_barrier_p, reduce_precision_p
from ..tracer import Tracer


def _concrete_index(value, what):
    if isinstance(value, Tracer):
        value._concretization_error("index", f"The {what} must be a concrete integer.")
    return operator.index(value)


def reduce_precision(operand, exponent_bits, mantissa_bits):
    """Rounds ``operand`` to a float with ``exponent_bits`` exponent and ``mantissa_bits``
    mantissa bits (XLA's ReducePrecision)."""
    exponent_bits = _concrete_index(exponent_bits, "exponent_bits argument of "
                                    "lax.reduce_precision")
    mantissa_bits = _concrete_index(mantissa_bits, "mantissa_bits argument of "
                                    "lax.reduce_precision")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits,
                                   mantissa_bits=mantissa_bits)


def optimization_barrier(operand, /):
    """The pytree ``operand`` unchanged; XLA may not move computation across the barrier."""
    flat, tree = tree_util.tree_flatten(operand)
    return tree_util.tree_unflatten(tree, optimization_barrier_p.bind(*flat))
