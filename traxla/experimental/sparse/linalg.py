"""``jax.experimental.sparse.linalg``: not supported by traxla, which does not have sparse
linear algebra (jax.experimental.sparse.linalg). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""
from __future__ import annotations

from collections.abc import Callable
import functools
import numpy as np
import traxla as jax
import traxla._src.core as core
import traxla._src.dispatch as dispatch
import traxla._src.interpreters.ad as ad
import traxla.experimental.sparse as sparse
import traxla.interpreters.mlir as mlir
import traxla.numpy as jnp

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'sparse linear algebra (jax.experimental.sparse.linalg)'
_fill(globals(), _CAPABILITY,
    functions='lobpcg_standard spsolve',
    constants='spsolve_p',
    modules='ffi scipy')
