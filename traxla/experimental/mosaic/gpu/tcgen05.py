"""``jax.experimental.mosaic.gpu.tcgen05``: not supported by traxla, which does not have
Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from typing import Any
from typing import cast
import dataclasses
import functools
import itertools
import math
import numpy as np
import traxla.experimental.mosaic.gpu.fragmented_array as fa

from traxla.base.unsupported import fill as _fill

TCGEN05_SMEM_DESCRIPTOR_BIT = 70368744177664
TMEM_MAX_COLS = 512
TMEM_ROWS = 128

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('async_copy_scales_smem_to_tmem async_copy_smem_to_tmem '
      'async_copy_sparse_metadata_smem_to_tmem b_scales_m64_collective_layout commit_arrive '
      'commit_tmem create_instr_descriptor create_scaled_f4_instr_descriptor '
      'create_scaled_f8f6f4_instr_descriptor fa_m64_collective_layout mma scales_layout '
      'sparse_meta_layout tmem_alloc tmem_alloc_exact_ncols tmem_dealloc '
      'tmem_default_layout tmem_half_lane_layout tmem_m64_collective_layout '
      'tmem_relinquish_alloc_permit wait_load_tmem'),
    classes='LaunchContext TMEMLayout TMEMRef',
    constants='COL_LAYOUT LAYOUT ROW_LAYOUT TMEM_NATIVE_LAYOUT TRANSPOSED_LAYOUT',
    modules='arith ir llvm memref mma_utils nvvm utils')
