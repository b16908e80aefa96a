"""``jax.experimental.mosaic.gpu.dialect_lowering``: not supported by traxla, which does not
have Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import Protocol
from typing import assert_never
from typing import cast
import dataclasses
import functools
import math
import numpy as np
import operator
import traxla.experimental.mosaic.gpu.constraints as cs

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('MlirLoweringRule do_mma fragmented_array_to_ir lower_mgpu_dialect '
      'memref_transforms_from_transforms_attr pprint_layout swizzle_from_transforms_attr '
      'tile_offset tile_strides transform_type unwrap_transformed_memref '
      'wrap_transformed_memref'),
    classes='LoweringContext MMALayouts Recursed',
    constants='CMPF_IMPLS CMPI_IMPLS MlirLoweringRuleResult RECURSED',
    modules=('arith builtin fa func gpu inference_utils ir layouts_lib lc memref mgpu '
      'mlir_interpreter mlir_math nvvm scf tcgen05 utils vector wgmma'))
