"""``jax.experimental.array_serialization.pytree_serialization_utils``: not supported by
traxla, which does not have tensorstore array serialization (needs tensorstore). The module
imports and its names exist with JAX's kinds; using one raises NotImplementedError naming the
capability."""

import logging
from concurrent.futures import Future
from types import ModuleType
from typing import Any
from typing import TypeVar
import base64
import typing as _typing
import logging as _logging

from traxla.base.unsupported import fill as _fill

T = _typing.TypeVar('T')
logger = _logging.getLogger(__name__)

_CAPABILITY = 'tensorstore array serialization (needs tensorstore)'
_fill(globals(), _CAPABILITY,
    functions='deserialize_pytreedef register_pytree_node_serialization serialize_pytreedef',
    classes='PickleModule PyTreeFuture',
    modules='flatbuffers ser_flatbuf')
