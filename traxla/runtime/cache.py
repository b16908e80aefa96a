"""Bounded, thread-safe caches for traced jaxprs and compiled executables.

Every cache registers itself so that ``clear_caches()`` empties them all (as
``jax.clear_caches``). A miss computes its value once: when several threads
miss the same key together, one builds it and the others wait for it, so a
program is traced and compiled once per key.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

_MISSING = object()
_all_caches: "weakref.WeakSet[BoundedCache]" = weakref.WeakSet()
_clear_hooks: list = []


class BoundedCache:
    """A least-recently-used map holding at most ``maxsize`` entries (a callable returning
    the bound is read at each insertion, so a config change applies at once).
    ``on_evict(key, value)`` runs for every entry dropped by the bound or by ``clear``."""

    __slots__ = ("_data", "_lock", "_building", "_maxsize", "_on_evict", "__weakref__")

    def __init__(self, maxsize, on_evict=None):
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict = {}
        self._maxsize = maxsize
        self._on_evict = on_evict
        # registered for ``clear_caches`` by its first insertion (a jit's caches are made
        # with every ``jit(f)``, most never filled): an empty cache has nothing to clear

    @property
    def maxsize(self) -> int:
        return self._maxsize() if callable(self._maxsize) else self._maxsize

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def keys(self):
        return list(self._data)

    def __iter__(self):  # over a snapshot of the keys (other threads may insert meanwhile)
        return iter(self.keys())

    def values(self):
        return list(self._data.values())

    def get(self, key, default=None):
        data = self._data
        value = data.get(key, _MISSING)
        if value is _MISSING:
            return default
        try:
            data.move_to_end(key)
        except KeyError:  # evicted by another thread meanwhile: the value is still good
            pass
        return value

    def __setitem__(self, key, value):
        evicted = []
        with self._lock:
            if not self._data:
                _all_caches.add(self)
            self._data[key] = value
            self._data.move_to_end(key)
            bound = max(self.maxsize, 0)
            while len(self._data) > bound:
                evicted.append(self._data.popitem(last=False))
        self._evicted(evicted)

    def pop(self, key, default=None):
        with self._lock:
            return self._data.pop(key, default)

    def __delitem__(self, key):
        with self._lock:
            del self._data[key]

    def clear(self):
        with self._lock:
            evicted = list(self._data.items())
            self._data.clear()
        self._evicted(evicted)

    def _evicted(self, items):
        if self._on_evict is not None:
            for k, v in items:
                self._on_evict(k, v)

    def get_or_create(self, key, make):
        """The cached value of ``key``, built by ``make()`` on a miss -- once, even when
        several threads miss together (the others wait for the builder's result)."""
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value
        me = threading.get_ident()
        with self._lock:
            value = self._data.get(key, _MISSING)
            if value is not _MISSING:
                return value
            gate = self._building.get(key)
            if gate is None:
                gate = self._building[key] = (threading.Lock(), me)
                gate[0].acquire()
                owner = True
            else:
                owner = False
        if not owner:
            if gate[1] == me:  # the builder itself asks again (re-entrant make): build
                return make()
            with gate[0]:
                pass  # the builder has finished (or failed)
            value = self.get(key, _MISSING)
            return value if value is not _MISSING else self.get_or_create(key, make)
        try:
            value = make()
            self[key] = value
            return value
        finally:
            with self._lock:
                self._building.pop(key, None)
            gate[0].release()


def on_clear(hook):
    """Registers ``hook()``, run by ``clear_caches`` (for caches that are not BoundedCaches)."""
    _clear_hooks.append(hook)
    return hook


def clear_caches() -> None:
    """Empties every traced-jaxpr and executable cache (``jax.clear_caches``): programs are
    traced and compiled again on their next call."""
    for cache in list(_all_caches):
        cache.clear()
    for hook in list(_clear_hooks):
        hook()
