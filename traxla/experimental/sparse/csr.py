"""``jax.experimental.sparse.csr``: not supported by traxla, which does not have the CSR/CSC
sparse formats (jax.experimental.sparse.csr). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from functools import partial
from traxla import Array
from traxla.experimental.sparse import CuSparseEfficiencyWarning
from traxla.experimental.sparse import JAXSparse
import numpy as np
import operator
import traxla as jax
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad
import traxla.interpreters.mlir as mlir
import traxla.lax as lax
import traxla.numpy as jnp
import traxla.tree_util as tree_util
import warnings

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'the CSR/CSC sparse formats (jax.experimental.sparse.csr)'
_fill(globals(), _CAPABILITY,
    functions='DTypeLike Shape csr_fromdense csr_matmat csr_matvec csr_todense promote_dtypes',
    classes='COOInfo CSC CSR',
    constants='csr_fromdense_p csr_matmat_p csr_matvec_p csr_todense_p')
