"""``jax.experimental.mosaic.gpu.launch_context``: not supported by traxla, which does not
have Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import TypeVar
from typing import cast
import contextlib
import dataclasses
import enum
import functools
import math
import numpy as np
import traxla.experimental.mosaic.gpu.fragmented_array as fa

from traxla.base.unsupported import fill as _fill

COLLECTIVE_ATTR = 'mosaic_gpu.collective_metadata_used'
COLLECTIVE_METADATA_SIZE = 4
DEVICE_ID_ATTR = 'mosaic_gpu.device_id_load'
KERNEL_ARG_ID_ATTR = 'mosaic_gpu.from_kernel_arg_idx'
MOSAIC_GPU_SMEM_ALLOC_ATTR = 'mosaic_gpu_smem_alloc'
MULTIMEM_ARGS_ATTR = 'mosaic_gpu.multimem_args'
ORIGINAL_KERNEL_ARG_ATTR = 'mosaic_gpu.original_kernel_arg'
TMA_DESCRIPTOR_ALIGNMENT = 64
TMA_DESCRIPTOR_BYTES = 128
USES_MULTIMEM_ATTR = 'mosaic_gpu.multimem_used'

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions='TMAReductionOp c get_collective_metadata_size uses_collective_metadata',
    classes=('AsyncCopyImplementation CollapseLeadingIndicesTransform CopyPartition '
      'DropUnitDimsTransform GlobalBroadcast LaunchContext MemRefTransform OOBFillMode '
      'OnDeviceProfiler ReplicationError Rounding Scratch TileTransform TransposeTransform'),
    constants='GLOBAL_BROADCAST',
    modules='arith builtin func gpu ir llvm memref mgpu_dialect nvvm profiler utils')
