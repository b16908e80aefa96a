"""The ``accuracy=`` parameter of transcendental unary primitives (``exp``, ``sin``,
``sqrt``, ...): JAX's ``lax.Tolerance`` and ``lax.AccuracyMode``, carried in the equation's
params and lowered to StableHLO's ``result_accuracy`` attribute."""
from __future__ import annotations

import enum


class Tolerance:
    """Specify the tolerances used for computing unary functions.

    Maximum two tolerances can be specified: (atol and rtol) or (atol and ulps).
    """

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps


class AccuracyMode(enum.Enum):
    HIGHEST = 1
    DEFAULT = 2
