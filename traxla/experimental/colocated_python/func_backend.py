"""``jax.experimental.colocated_python.func_backend``: JAX's IFRT machinery behind colocated Python. traxla runs
``colocated_python`` and ``colocated_python_class`` through its own ``api`` module, so
this module's names exist with JAX's kinds, and using one raises NotImplementedError."""
from __future__ import annotations

from collections.abc import Sequence
import threading
import traxla as jax

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "JAX's IFRT internals of colocated Python"
_fill(globals(), _CAPABILITY,
    constants='SINGLETON_RESULT_STORE')
