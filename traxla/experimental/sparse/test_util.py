"""``jax.experimental.sparse.test_util``: not supported by traxla, which does not have JAX's
sparse test utilities (jax.experimental.sparse.test_util). The module imports and its names
exist with JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any
from typing import NamedTuple
import functools
import itertools
import math
import numpy as np
import traxla as jax
import traxla.experimental.sparse as sparse
import traxla.lax as lax
import traxla.numpy as jnp
import traxla.tree_util as tree_util

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "JAX's sparse test utilities (jax.experimental.sparse.test_util)"
_fill(globals(), _CAPABILITY,
    functions=('DTypeLike DotDimensionNumbers is_sparse iter_bcsr_layouts iter_sparse_layouts '
      'iter_subsets rand_bcoo rand_bcsr rand_sparse safe_zip split_list'),
    classes='BatchedDotGeneralProperties SparseLayout SparseTestCase',
    constants='MATMUL_TOL',
    modules='jtu')
