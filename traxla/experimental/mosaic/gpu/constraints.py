"""``jax.experimental.mosaic.gpu.constraints``: not supported by traxla, which does not have
Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from typing import Any as VariableKey
from typing import assert_never
from typing import cast
from typing import final
import abc
import dataclasses
import enum
import math
import numpy as np

from traxla.base.unsupported import fill as _fill

TYPE_CHECKING = False

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('compute_transitively_equal_vars is_valid_assignment merge_divides_constraints '
      'non_splat_variables reduce reduce_collapse_shape_expression reduce_constraint '
      'reduce_expression reduce_reduce_expression reduce_reshape_expression '
      'reduce_transpose_expression saturate_distinct_from_splat '
      'saturate_divides_constraints_for_equal_vars'),
    classes=('AlwaysTrue CollapseShape ConstraintSystem Divides Equals IsSupportedBroadcast '
      'IsTransferable IsTransferableSmemRegisters IsTransferableTmemRegisters '
      'IsValidMmaTiling MemorySpace MinorDimDivisibleBy NotOfType OptimizedTransferKind '
      'Reduce RegisterLayout Relayout Reshape SMEMTransforms TMEMLayout Transpose '
      'Unsatisfiable Variable'),
    constants='Constant Constraint Expression',
    modules='fa inference_utils layouts_lib lc lowering tcgen05 utils')
