"""``jax.experimental.mosaic.gpu.layout_inference``: not supported by traxla, which does not
have Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import assert_never
from typing import cast
import dataclasses
import enum
import itertools
import math
import numpy as np
import re
import traxla.experimental.mosaic.gpu.constraints as cs
import traxla.experimental.mosaic.gpu.fragmented_array as fa
import traxla.experimental.mosaic.gpu.inference_utils as inference_utils
import traxla.experimental.mosaic.gpu.launch_context as lc

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('ConstraintSystemDerivationRule ConstraintSystemDerivationRuleResult '
      'ValueSitesForVariable assign_layouts check_layout_assignment conjure_assignment '
      'consumer_operands derive_relayout_constraints dynamic_gcd '
      'extract_assignment_candidates_from_reduce_equation find_assignments_for infer_layout '
      'is_hopper is_terminator is_vector prime_decomposition producer_result traverse_op '
      'vector_value_sites'),
    classes='DerivationContext MMALayouts ValueSite VariableType',
    modules='arith ir layouts_lib logging memref mgpu mlir_math scf tcgen05 utils vector')
