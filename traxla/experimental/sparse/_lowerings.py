"""``jax.experimental.sparse._lowerings``: not supported by traxla, which does not have
cuSPARSE lowerings (jax.experimental.sparse._lowerings). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""

from functools import partial
from typing import Any
import numpy as np
import traxla._src.core as core
import traxla._src.dispatch as dispatch

from traxla.base.unsupported import fill as _fill

api_version = 1
name = 'cpu_csr_sparse_dense_ffi'
platform = 'cpu'

_CAPABILITY = 'cuSPARSE lowerings (jax.experimental.sparse._lowerings)'
_fill(globals(), _CAPABILITY,
    functions=('coo_fromdense_gpu_lowering coo_todense_gpu_lowering csr_fromdense_gpu_lowering '
      'csr_todense_gpu_lowering'),
    constants=('SUPPORTED_DATA_DTYPES SUPPORTED_INDEX_DTYPES coo_spmm_p coo_spmv_p csr_spmm_p '
      'csr_spmv_p targets value'),
    modules='cpu_sparse ffi gpu_sparse mlir')
