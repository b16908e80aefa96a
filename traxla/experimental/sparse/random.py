"""``jax.experimental.sparse.random``: not supported by traxla, which does not have random
sparse arrays (jax.experimental.sparse.random). The module imports and its names exist with
JAX's kinds; using one raises NotImplementedError naming the capability."""

from collections.abc import Callable
from collections.abc import Sequence
from traxla import Array
from traxla import vmap
from typing import Any
import math
import operator
import traxla._src.dtypes as dtypes
import traxla.experimental.sparse as sparse
import traxla.numpy as jnp
import traxla.random as random

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'random sparse arrays (jax.experimental.sparse.random)'
_fill(globals(), _CAPABILITY,
    functions='DTypeLike random_bcoo split_list')
