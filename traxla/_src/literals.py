"""``jax._src.literals``: ``TypedNdArray``, the host-side array JAX hands back for values of
dtype float0."""
from __future__ import annotations

from traxla.ir.literals import TypedNdArray  # noqa: F401
