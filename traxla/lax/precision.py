"""Numeric precision: of products (``Precision``, ``DotAlgorithmPreset``, ``DotAlgorithm`` and
``canonicalize_precision``, for dots and convolutions) and of values (``reduce_precision``)."""
from __future__ import annotations

import enum
import operator

from traxla.ir.config import config
from traxla.ir.dot_algorithm import DotAlgorithm, DotAlgorithmPreset  # noqa: F401  (lax's names)
from traxla.ir.rules.optimization import reduce_precision_p
from traxla.tracer import Tracer


class Precision(enum.Enum):
    """Precision of matrix-multiply-like operations on accelerators (no effect on CPU)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        return _PRECISION_STRINGS.get(value)

    def __repr__(self):
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_STRINGS = {"highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
                      "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH,
                      "tensorfloat32": Precision.HIGH, "default": Precision.DEFAULT,
                      "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
                      None: Precision.DEFAULT}


def canonicalize_precision(precision):
    """JAX's ``canonicalize_precision``: None, a pair of ``Precision`` values, or a
    ``DotAlgorithmPreset``."""
    if precision is None:  # the ``default_matmul_precision`` flag (this thread's value)
        default = config.read("default_matmul_precision")
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, "
                f"but got {default}") from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            return Precision(precision), Precision(precision)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
    elif isinstance(precision, Precision):
        return precision, precision
    elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision
    elif (isinstance(precision, (list, tuple)) and len(precision) == 2
          and all(isinstance(p, Precision) for p in precision)):
        return tuple(precision)
    elif (isinstance(precision, (list, tuple)) and len(precision) == 2
          and all(isinstance(p, str) for p in precision)):
        return canonicalize_precision(precision[0])[0], canonicalize_precision(precision[1])[0]
    raise ValueError(
        "Precision argument must be one of:\n- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        f"- a lax.DotAlgorithm value;\nbut got {precision}.")


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
