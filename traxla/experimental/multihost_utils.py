"""``traxla.experimental.multihost_utils``: collectives across processes, as
``jax.experimental.multihost_utils``. traxla runs one process: broadcasting returns the
caller's data, gathering stacks (or tiles) it once, and the barrier has no one to wait for;
with more than one process these raise NotImplementedError."""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from traxla.api.environment import process_count
from traxla.tree_util import tree_map, tree_flatten
from traxla.numpy import asarray


def _one_process(what: str) -> None:
    if process_count() != 1:
        raise NotImplementedError(f"multihost_utils.{what}: traxla runs collectives across "
                                  f"one process only; this job has {process_count()}")


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """The source process's ``in_tree`` on every process (here: the caller's, as arrays)."""
    _one_process("broadcast_one_to_all")
    return tree_map(asarray, in_tree)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """NumPy arrays of every process's leaves, stacked on a new axis 0 (``tiled``:
    concatenated along axis 0)."""
    _one_process("process_allgather")

    def gather(x):
        x = np.asarray(x)
        return np.expand_dims(x, 0) if x.ndim == 0 or not tiled else x
    return tree_map(gather, in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raises AssertionError unless every process holds the same values."""
    out = process_allgather(in_tree, tiled=True)

    def expected(x):
        x = np.asarray(x)
        return np.concatenate([np.expand_dims(x, 0) if x.ndim == 0 else x] * process_count())
    for got, want in zip(tree_flatten(out)[0], tree_flatten(tree_map(expected, in_tree))[0]):
        if not np.array_equal(got, want):
            raise AssertionError(f"{fail_message} Expected: {want}; got: {got}.")


def sync_global_devices(name: str) -> None:
    """A barrier across processes (checks every process reached the same ``name``)."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ('{name}')")


__all__ = ["assert_equal", "broadcast_one_to_all", "process_allgather", "sync_global_devices"]
