"""``jax.experimental.mosaic.gpu.mma_utils``: not supported by traxla, which does not have
Mosaic GPU (JAX's CUDA kernel language). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""

import enum
import math

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "Mosaic GPU (JAX's CUDA kernel language)"
_fill(globals(), _CAPABILITY,
    functions='create_descriptor encode_addr encode_descriptor tiled_memref_shape',
    classes='Dim',
    modules='arith ir llvm mgpu_dialect utils')
