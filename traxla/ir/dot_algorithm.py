"""The dot algorithms a product's ``precision=`` may name instead of ``Precision`` values:
JAX's ``lax.DotAlgorithmPreset`` (named presets) and ``lax.DotAlgorithm`` (an explicit
algorithm). They travel in ``dot_general``'s params; lowering converts the operands to the
algorithm's input types, computes in its accumulation type, and sets StableHLO's
``algorithm`` attribute (on CPU, where XLA ignores that attribute, only the presets CPU
computes faithfully are accepted, as JAX)."""
from __future__ import annotations

import enum
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from traxla.ir import dtypes


class DotAlgorithm(NamedTuple):
    """Specify the algorithm used for computing dot products: the types the operands are
    rounded to, the accumulation type, and (for algorithms that emulate a higher precision
    with several products) the component counts and number of primitive operations."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False

    def compute_types(self, lhs_dtype, rhs_dtype, out_dtype):
        return (np.dtype(self.lhs_precision_type), np.dtype(self.rhs_precision_type),
                np.dtype(self.accumulation_type))

    def attribute_fields(self, lhs_dtype, rhs_dtype):
        """``(lhs type, rhs type, accumulation type, lhs components, rhs components,
        primitive operations, imprecise accumulation)`` of StableHLO's DotAlgorithm."""
        return (np.dtype(self.lhs_precision_type), np.dtype(self.rhs_precision_type),
                np.dtype(self.accumulation_type), self.lhs_component_count,
                self.rhs_component_count, self.num_primitive_operations,
                self.allow_imprecise_accumulation)


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (accepted as ``precision=``, by value or by name; printed by
    name). On CPU only DEFAULT, F16_F16_F16, F32_F32_F32, F64_F64_F64, BF16_BF16_F32,
    BF16_BF16_F32_X3 and BF16_BF16_F32_X6 compile, as JAX."""

    DEFAULT = 1
    ANY_F8_ANY_F8_F32 = 2
    ANY_F8_ANY_F8_F32_FAST_ACCUM = 3
    ANY_F8_ANY_F8_ANY = 4
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = 5
    F16_F16_F16 = 6
    F16_F16_F32 = 7
    BF16_BF16_BF16 = 8
    BF16_BF16_F32 = 9
    BF16_BF16_F32_X3 = 10
    BF16_BF16_F32_X6 = 11
    BF16_BF16_F32_X9 = 12
    TF32_TF32_F32 = 13
    TF32_TF32_F32_X3 = 14
    F32_F32_F32 = 15
    F64_F64_F64 = 16

    def __repr__(self):
        return f"{self.__class__.__name__}.{self.name}"

    def __str__(self):
        return self.name

    @property
    def supported_lhs_types(self):
        return _SUPPORTED_TYPES.get(self.name, (dtypes.float32,))

    @property
    def supported_rhs_types(self):
        return self.supported_lhs_types

    @property
    def accumulation_type(self):
        return _ACCUMULATION.get(self.name, dtypes.float32)

    def supported_output_types(self, lhs_dtype, rhs_dtype):
        name = self.name
        if name.startswith("ANY_F8_ANY_F8_F32"):
            return (dtypes.float32, dtypes.float16, dtypes.bfloat16,
                    *(np.dtype(getattr(ml_dtypes, n)) for n in (
                        "float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3fnuz",
                        "float8_e4m3b11fnuz")))
        if name in ("F16_F16_F32", "BF16_BF16_F32"):
            narrow = dtypes.float16 if name == "F16_F16_F32" else dtypes.bfloat16
            # (the narrow output only from narrow inputs: both, once converted)
            if np.dtype(lhs_dtype) == narrow and np.dtype(rhs_dtype) == narrow:
                return (dtypes.float32, narrow)
            return (dtypes.float32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)

    def compute_types(self, lhs_dtype, rhs_dtype, out_dtype):
        """JAX's ``get_algorithm_compute_types``: the operand types the product takes and
        the type it accumulates (and returns) in; each is the given one where supported."""
        def pick(dtype, supported):
            if supported is None or np.dtype(dtype) in supported:
                return np.dtype(dtype)
            return np.dtype(supported[0])
        lhs = pick(lhs_dtype, self.supported_lhs_types)
        rhs = pick(rhs_dtype, self.supported_rhs_types)
        return lhs, rhs, pick(out_dtype, self.supported_output_types(lhs, rhs))

    def attribute_fields(self, lhs_dtype, rhs_dtype):
        """StableHLO's DotAlgorithm fields (see ``DotAlgorithm.attribute_fields``); None for
        DEFAULT, which sets no attribute."""
        name = self.name
        if name == "DEFAULT":
            return None
        if name.startswith("ANY_F8"):
            if not (np.dtype(lhs_dtype) in _F8 and np.dtype(rhs_dtype) in _F8):
                raise ValueError(f"The dot algorithm '{self}' requires both inputs to have "
                                 f"float8 dtypes. Got {lhs_dtype} and {rhs_dtype} instead.")
            return (np.dtype(lhs_dtype), np.dtype(rhs_dtype), dtypes.float32, 1, 1, 1,
                    name == "ANY_F8_ANY_F8_F32_FAST_ACCUM")
        parts = name.split("_")
        ops = int(parts[3][1:]) if len(parts) == 4 else 1
        lhs, rhs, acc = (_ALGORITHM_TYPES[p] for p in parts[:3])
        return lhs, rhs, acc, 1, 1, ops, False


_ANY = ("DEFAULT", "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
        "ANY_F8_ANY_F8_ANY_FAST_ACCUM")
_SUPPORTED_TYPES = {**{n: None for n in _ANY},
                    "F16_F16_F16": (dtypes.float16,), "F16_F16_F32": (dtypes.float16,),
                    "BF16_BF16_BF16": (dtypes.bfloat16, dtypes.float32),
                    "BF16_BF16_F32": (dtypes.bfloat16, dtypes.float32),
                    "F64_F64_F64": (dtypes.float64,)}
_ACCUMULATION = {"DEFAULT": None, "ANY_F8_ANY_F8_ANY": None,
                 "ANY_F8_ANY_F8_ANY_FAST_ACCUM": None, "F16_F16_F16": dtypes.float16,
                 "BF16_BF16_BF16": dtypes.bfloat16, "F64_F64_F64": dtypes.float64}
# "TF32" stands for the tf32 MLIR type, which has no NumPy dtype: lowering maps the name.
_ALGORITHM_TYPES = {"F16": dtypes.float16, "BF16": dtypes.bfloat16, "F32": dtypes.float32,
                    "F64": dtypes.float64, "TF32": "tf32"}
_F8 = frozenset(np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e3m4", "float8_e4m3", "float8_e8m0fnu"))
# The algorithms XLA's CPU backend computes as specified (it ignores the attribute, so JAX
# refuses the others there rather than compute something else).
CPU_PRESETS = frozenset(DotAlgorithmPreset[n] for n in (
    "DEFAULT", "F16_F16_F16", "F32_F32_F32", "F64_F64_F64", "BF16_BF16_F32", "BF16_BF16_F32_X3",
    "BF16_BF16_F32_X6"))

