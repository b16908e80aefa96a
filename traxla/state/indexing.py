"""Ref indexing by dynamic slices: ``Slice`` (a start, static or traced, a static size and a
stride) and ``dslice``/``ds`` (JAX's ``jax.ds``, ``pl.ds``): ``ref[ds(i, n)]`` is
``ref[i:i+n]`` with ``i`` possibly traced."""
from __future__ import annotations

import dataclasses
from typing import Any

from traxla import tree_util
from traxla.tracer import Tracer

__all__ = ["Slice", "ds", "dslice"]


@tree_util.register_pytree_node_class
@dataclasses.dataclass(frozen=True)
class Slice:
    """A slice with a start index (static or traced), a static size and a stride
    (``jax.experimental.pallas.Slice``)."""
    start: Any
    size: Any
    stride: int = 1

    def __post_init__(self):
        if self.stride < 0:
            raise ValueError("`stride` must be >= 0.")

    @property
    def is_dynamic_start(self):
        return isinstance(self.start, Tracer) or hasattr(self.start, "shape")

    @property
    def is_dynamic_size(self):
        return isinstance(self.size, Tracer) or hasattr(self.size, "shape")

    def tree_flatten(self):
        dyn_start, dyn_size = self.is_dynamic_start, self.is_dynamic_size
        return ((self.start if dyn_start else None, self.size if dyn_size else None),
                (None if dyn_start else self.start, None if dyn_size else self.size,
                 self.stride))

    @classmethod
    def tree_unflatten(cls, aux, children):
        start, size = (a if a is not None else b for a, b in zip(children, aux[:2]))
        return cls(start, size, aux[2])

    @classmethod
    def from_slice(cls, slc: slice, size: int) -> "Slice":
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, len(range(start, stop, step)), step)


def dslice(start, size=None, stride=None):
    """``dslice(i, n)`` is ``i:i+n`` with ``i`` possibly traced; ``dslice(j)`` is ``:j``,
    ``dslice(None)`` is ``:``."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)


ds = dslice
