"""``jax.experimental.mosaic.gpu.fragmented_array``: not supported by traxla, which does not
have Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypeAlias
from typing import TypeVar
from typing import cast
from typing import overload
from typing import runtime_checkable
import dataclasses
import enum
import functools
import itertools
import math
import numpy as np
import traxla as jax
import typing as _typing

from traxla.base.unsupported import fill as _fill

SMEM_BANKS = 32
SMEM_BANK_BYTES = 4
T = _typing.TypeVar('T')
WARPGROUP_SIZE = 128
WARPS_IN_WARPGROUP = 4
WARP_SIZE = 32
mgpu_lib = None

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('IndexTransform addf c can_relayout_wgmma_2x_to_wgmma '
      'can_relayout_wgmma_4x_to_wgmma_2x copy_tiled enumerate_negative '
      'is_supported_strided_layout_broadcast mulf optimization_barrier plan_tiled_transfer '
      'subf tiled_copy_smem_gmem_layout tmem_native_layout'),
    classes=('FragmentedArray ReductionKind Replicated Rounding StaggeredTransferPlan TiledLayout '
      'Tiling TransferPlan TransferPlanDerivationError TrivialTransferPlan '
      'WGSplatFragLayout WGStridedFragLayout'),
    constants=('FragmentedLayout TCGEN05_COL_LAYOUT TCGEN05_LAYOUT TCGEN05_ROW_LAYOUT '
      'TCGEN05_TRANSPOSED_LAYOUT TMA_INDICES_4_LAYOUT TMA_INDICES_LAYOUT TMEM_NATIVE_LAYOUT '
      'WGMMA_COL_LAYOUT WGMMA_LAYOUT WGMMA_LAYOUT_8BIT WGMMA_LAYOUT_ACC_32BIT '
      'WGMMA_LAYOUT_UPCAST_2X WGMMA_LAYOUT_UPCAST_4X WGMMA_ROW_LAYOUT '
      'WGMMA_TRANSPOSED_LAYOUT'),
    modules='arith gpu ir llvm memref mgpu mlir_math nvvm utils vector')
