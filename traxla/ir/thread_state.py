"""Per-thread state: what JAX keeps thread-local (the current mesh, the axis
environment of shard_map...) must not leak from one Python thread into another."""
from __future__ import annotations

import threading

# One token per open block, in any thread, that leaves a thread's state unusual: a current
# trace set by ``tracer.traces.set_current_trace`` (tracing, or a transformation), a
# thread-local flag block (``Config.thread_local``). ``list.append``/``pop`` are atomic, so
# while it is empty every thread is eager under the global flags: the cached-call paths read
# it first and the (slower) thread-local state only when it is not empty.
unusual: list = []


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


# The named axes in scope (innermost last): the meshes of the enclosing shard_maps and the
# AxisFrames of the enclosing named vmaps, each with ``axis_names`` and ``axis_size(name)``.
# Pushed by shard_map and vmap, read by the collectives in lax.parallel.
axis_env = ThreadLocalStack()


class AxisFrame:
    """A named axis bound by ``vmap(..., axis_name=...)``: an entry of ``axis_env``
    answering like a one-axis mesh (``axis_names``, ``axis_size``), so the collectives
    find the vmapped axis's size as they find a shard_map axis's."""

    __slots__ = ("name", "size", "axis_names")

    def __init__(self, name, size: int):
        self.name = name
        self.size = int(size)
        self.axis_names = (name,)

    def axis_size(self, name) -> int:
        return self.size

    def __repr__(self):
        return f"AxisFrame({self.name!r}, {self.size})"


# The axis name of the vmap whose batching rule is running (innermost last): batch_jaxpr,
# called by the rules of jit, scan, cond..., batches the inner jaxpr over the same name.
batching_axis_names = ThreadLocalStack()
