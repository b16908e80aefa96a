"""``jax.experimental.mosaic.gpu.mma``: not supported by traxla, which does not have Mosaic
GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's kinds;
using one raises NotImplementedError naming the capability."""

import itertools
import numpy as np
import traxla.experimental.mosaic.gpu.fragmented_array as fa

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions='mma',
    classes='MMALayouts',
    constants='SUPPORTED_F8_TYPES',
    modules='ir llvm utils vector')
