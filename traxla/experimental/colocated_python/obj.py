"""``jax.experimental.colocated_python.obj``: not supported by traxla, which does not have
colocated Python objects on IFRT backends (jax.experimental.colocated_python). The module
imports and its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
import inspect
import random
import threading
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.tree_util as tree_util
import traxla._src.util as util
import traxla.experimental.colocated_python.func as func

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'colocated Python objects on IFRT backends (jax.experimental.colocated_python)'
_fill(globals(), _CAPABILITY,
    functions='api_boundary register_cache wrap_class',
    constants='SINGLETON_INSTANCE_REGISTRY',
    modules='obj_backend')
