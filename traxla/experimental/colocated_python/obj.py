"""``jax.experimental.colocated_python.obj``: JAX's IFRT machinery behind colocated Python. traxla runs
``colocated_python`` and ``colocated_python_class`` through its own ``api`` module, so
this module's names exist with JAX's kinds, and using one raises NotImplementedError."""
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

_CAPABILITY = "JAX's IFRT internals of colocated Python"
_fill(globals(), _CAPABILITY,
    functions="api_boundary register_cache wrap_class",
    constants='SINGLETON_INSTANCE_REGISTRY',
    )

from traxla.experimental.colocated_python import obj_backend  # noqa: E402,F401
