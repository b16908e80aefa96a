"""Per-thread state: what JAX keeps thread-local (the current mesh, the axis
environment of shard_map...) must not leak from one Python thread into another."""
from __future__ import annotations

import threading


class ThreadLocalStack:
    """A list whose contents belong to the calling thread (each thread starts empty).
    Supports the list operations the stacks use: append/pop, len, indexing, slicing
    deletion, iteration and reversal."""

    __slots__ = ("_local",)

    def __init__(self):
        self._local = threading.local()

    def _items(self) -> list:
        try:
            return self._local.items
        except AttributeError:
            items = self._local.items = []
            return items

    def __getattr__(self, name):  # append, pop, extend, clear, index, copy...
        return getattr(self._items(), name)

    def __len__(self):
        return len(self._items())

    def __bool__(self):
        return bool(self._items())

    def __iter__(self):
        return iter(self._items())

    def __reversed__(self):
        return reversed(self._items())

    def __contains__(self, x):
        return x in self._items()

    def __getitem__(self, i):
        return self._items()[i]

    def __setitem__(self, i, value):
        self._items()[i] = value

    def __delitem__(self, i):
        del self._items()[i]

    def __repr__(self):
        return f"ThreadLocalStack({self._items()!r})"


# The meshes of the enclosing shard_maps (innermost last): axis names and sizes. Pushed by
# shard_map, read by the collectives in lax.parallel.
axis_env = ThreadLocalStack()
