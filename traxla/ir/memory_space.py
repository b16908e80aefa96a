"""``jax.memory.Space`` (JAX's ``core.MemorySpace``): the memory a value lives in, as
``device_put(x, jax.memory.Space.Host)`` names it. traxla's avals name memory spaces with
JAX's memory-kind strings (``None``: device memory, ``"host"``: pinned host memory), and a
member compares equal to its string too, so that ``typeof(x).memory_space ==
jax.memory.Space.Host`` reads as in JAX."""
from __future__ import annotations

import enum


class MemorySpace(enum.Enum):
    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # (as JAX's: by identity, not by name)

    def __eq__(self, other):
        if isinstance(other, MemorySpace):
            return self is other
        return other in _ALIASES[self.name]

    def __ne__(self, other):
        return not self == other

    @property
    def memory_kind(self) -> str:
        """The memory kind of a sharding that puts a value in this space."""
        if self.name == "Any":
            raise ValueError("jax.memory.Space.Any names no memory a value can be put in; "
                             "use Space.Device or Space.Host")
        return "device" if self.name == "Device" else "pinned_host"


_ALIASES = {"Device": (None, "device"), "Host": ("host", "pinned_host"), "Any": ()}
