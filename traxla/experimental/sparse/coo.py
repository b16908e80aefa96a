"""``jax.experimental.sparse.coo``: not supported by traxla, which does not have the COO
sparse format (jax.experimental.sparse.coo). The module imports and its names exist with JAX's
kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from traxla import Array
from traxla.experimental.sparse import CuSparseEfficiencyWarning
from traxla.experimental.sparse import JAXSparse
from typing import Any
from typing import Any as Dtype
from typing import NamedTuple
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

_CAPABILITY = 'the COO sparse format (jax.experimental.sparse.coo)'
_fill(globals(), _CAPABILITY,
    functions=('ArrayLike DTypeLike Shape coo_fromdense coo_matmat coo_matvec coo_todense '
      'promote_dtypes'),
    classes='COO COOInfo',
    constants='coo_fromdense_p coo_matmat_p coo_matvec_p coo_todense_p',
    modules='hlo')
