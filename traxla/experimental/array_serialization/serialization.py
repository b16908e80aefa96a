"""``jax.experimental.array_serialization.serialization``: the interface of JAX's
asynchronous array checkpointing (what orbax checks its checkpointers against), and its
storage-independent helpers.

JAX's writers and readers (``async_serialize``, ``async_deserialize``,
``GlobalAsyncCheckpointManager``, ``get_tensorstore_spec``, ...) store arrays through
TensorStore; traxla does not provide them: the names flax imports exist and raise
``NotImplementedError`` when used, the others raise AttributeError, each saying so (orbax
writes arrays with its own TensorStore code and needs none of them)."""
from __future__ import annotations

import abc
import re
from typing import Any

_REMOTE_URL_PREFIXES = ["gs://", "s3://"]
_REMOTE_DRIVER_VALIDATIONS = [
    {"driver": "gcs", "path_regex": None},
    {"driver": "s3", "path_regex": None},
]

_TENSORSTORE_NAMES = frozenset({
    "AsyncManager", "async_serialize", "async_deserialize", "run_serialization",
    "run_deserialization", "estimate_read_memory_footprint", "ts"})


def _unsupported(name):
    return (f"traxla does not implement jax.experimental.array_serialization.serialization."
            f"{name}: JAX's TensorStore-backed array checkpointing is not part of traxla "
            "(orbax's own TensorStore serialization works on traxla's arrays)")


class BarrierTimeoutError(Exception):
    pass


def is_remote_storage(tspec: dict[str, Any] | str) -> bool:
    """Whether a TensorStore spec (or a KvStore URL) names cloud storage (as JAX's: gcs
    and s3 drivers, ``gs://`` and ``s3://`` URLs)."""
    if isinstance(tspec, str):
        return bool(re.match(rf'^({"|".join(_REMOTE_URL_PREFIXES)})', tspec))
    for key in ("base", "kvstore"):
        if key in tspec:
            return is_remote_storage(tspec[key])
    if "driver" in tspec:
        for rule in _REMOTE_DRIVER_VALIDATIONS:
            if tspec["driver"] == rule["driver"]:
                if rule["path_regex"] is None or re.match(rule["path_regex"], tspec["path"]):
                    return True
    return False


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """Interface for checkpointing arrays asynchronously (JAX's)."""

    __slots__ = ()

    @abc.abstractmethod
    def check_for_errors(self):
        """Checks if any errors have been raised in the child thread."""

    @abc.abstractmethod
    def wait_until_finished(self):
        """Blocks until serialization has finished."""

    @abc.abstractmethod
    def serialize(self, arrays, tensorstore_specs, *, on_commit_callback):
        """Serializes arrays to TensorStore."""

    @abc.abstractmethod
    def deserialize(self, shardings, tensorstore_specs, global_shapes=None, dtypes=None):
        """Deserializes arrays from TensorStore."""


class GlobalAsyncCheckpointManager(GlobalAsyncCheckpointManagerBase):
    """JAX's TensorStore checkpointer: not provided by traxla (making one raises)."""

    def __init__(self, timeout_secs=300):
        raise NotImplementedError(_unsupported("GlobalAsyncCheckpointManager"))

    check_for_errors = wait_until_finished = serialize = deserialize = __init__


def get_tensorstore_spec(ckpt_path, ocdbt=True, process_idx=None, arr=None, driver="zarr3"):
    """JAX's TensorStore spec of a checkpoint path: not provided by traxla (raises)."""
    raise NotImplementedError(_unsupported("get_tensorstore_spec"))


def __getattr__(name):
    if name in _TENSORSTORE_NAMES:
        raise AttributeError(_unsupported(name))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
