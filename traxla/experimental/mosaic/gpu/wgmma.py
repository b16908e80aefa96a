"""``jax.experimental.mosaic.gpu.wgmma``: not supported by traxla, which does not have Mosaic
GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's kinds;
using one raises NotImplementedError naming the capability."""

import dataclasses
import itertools
import math
import numpy as np
import traxla as jax
import traxla.experimental.mosaic.gpu.fragmented_array as fa
import traxla.experimental.mosaic.gpu.mma_utils as mma_utils
import traxla.experimental.mosaic.gpu.utils as utils

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions='bytewidth c wgmma wgmma_fence wgmma_m64',
    classes='WGMMAAccumulator',
    modules='arith ir llvm nvvm vector')
