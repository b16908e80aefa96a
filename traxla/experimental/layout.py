"""``traxla.experimental.layout``: ``Layout``, ``Format`` and ``with_layout_constraint``,
as ``jax.experimental.layout`` (defined in ``traxla/api/layouts.py``, beside ``jit``)."""
from __future__ import annotations

from traxla.api.layouts import Format, Layout, with_layout_constraint

__all__ = ["Format", "Layout", "with_layout_constraint"]
