"""``jax.experimental.colocated_python.obj_backend``: not supported by traxla, which does not
have colocated Python objects on IFRT backends (jax.experimental.colocated_python). The module
imports and its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
import dataclasses
import threading
import weakref

from traxla.base.unsupported import fill as _fill

_CAPABILITY = 'colocated Python objects on IFRT backends (jax.experimental.colocated_python)'
_fill(globals(), _CAPABILITY,
    constants='SINGLETON_OBJECT_STORE')
