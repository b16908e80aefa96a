"""``jax.experimental.mosaic.gpu.core``: not supported by traxla, which does not have Mosaic
GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's kinds;
using one raises NotImplementedError naming the capability."""

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Any as RefTree
from typing import Any as ShapeTree
from typing import Generic
from typing import TypeVar
import contextlib
import ctypes
import dataclasses
import enum
import functools
import hashlib
import io
import itertools
import math
import numpy as np
import os
import pathlib
import time
import traxla as jax
import traxla._src.core as jax_core
import traxla._src.dtypes as dtypes
import traxla._src.lib as lib
import traxla._src.util as jax_util
import weakref
import typing as _typing

from traxla.base.unsupported import fill as _fill

BAZEL_TEST = '0'
FWD_COMPAT_IR_VERSION = 2
PYTHON_RUNFILES = None
RUNTIME_PATH = None
T = _typing.TypeVar('T')
cuda_root = '/usr/local/cuda'

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions=('artificial_shared_memory_limit as_gpu_kernel as_torch_gpu_kernel c '
      'is_nvshmem_available is_single_process_multi_device_topology'),
    classes='Barrier ClusterBarrier LoweringSemantics TMABarrier TMEM Union',
    constants='KNOWN_KERNELS mosaic_gpu_p',
    modules=('arith builtin dialect dialect_lowering func gpu ir jex_backend launch_context '
      'layout_inference layouts llvm memref mesh_lib mlir nvvm passmanager profiler '
      'sharding_impls tcgen05 utils'))
