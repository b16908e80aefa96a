"""``jax.experimental.mosaic.gpu.profiler``: not supported by traxla, which does not have
Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""

import logging
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import ParamSpec
from typing import TypeVar
from typing import overload
import contextlib
import dataclasses
import enum
import functools
import inspect
import itertools
import json
import math
import numpy as np
import os
import tempfile
import traxla as jax
import traxla._src.util as util
import traxla.interpreters.mlir as mlir
import traxla.numpy as jnp
import warnings
import typing as _typing
import logging as _logging

from traxla.base.unsupported import fill as _fill

DYNAMIC = -9223372036854775808
DYNAMIC32 = -2147483648
MBARRIER_BYTES = 8
T = _typing.TypeVar('T')
WARPGROUP_SIZE = 128
WARPS_IN_WARPGROUP = 4
WARP_SIZE = 32
WORKGROUP_NVPTX_ADDRESS_SPACE = 3
logger = _logging.getLogger(__name__)
mosaic_gpu_lib = None

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('MultimemReductionOp bitcast bitwidth bitwidth_impl block_idx bytewidth c ceil_div '
      'clock cluster_collective_mask cluster_idx commit_shared debug_print dtype_to_ir_type '
      'dyn_dot elements_to_bytes fence_release_sys fori get_arch get_cluster_ptr '
      'get_cluster_ref get_contiguous_strides get_memref_llvm_address_space getelementptr '
      'globaltimer gpu_address_space_to_nvptx is_cluster_smem_ref is_known_divisible '
      'is_memref_transposed is_signed is_smem_ref is_tmem_ref measure memref_fold '
      'memref_ptr memref_reshape memref_slice memref_transpose memref_unfold '
      'memref_unsqueeze multimem_load_reduce multimem_store nanosleep '
      'nvvm_mbarrier_arrive_expect_tx nvvm_shfl_sync pack_array parse_indices prmt '
      'ptr_as_memref query_cluster_cancel reduce_shape redux shfl_bfly single_thread '
      'single_thread_predicate smem smem_cluster smid thread_idx tile_shape tmem '
      'try_cluster_cancel vector_concat vector_slice warp_barrier warp_idx warp_tree_reduce '
      'warpgroup_barrier warpgroup_idx when'),
    classes=('Arch BarrierRef CollectiveBarrierRef Cupti DialectBarrierRef DynamicSlice ForResult '
      'MultimemRef OnDeviceProfiler Partition Partition1D ProfilerSpec ReductionKind '
      'SemaphoreRef ThreadSubset ds'),
    constants='P',
    modules='arith builtin dialect gpu ir llvm memref nvvm scf stages vector')
