"""Lowering ``platform_index``: the index of the group holding the module's platform."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.platform import platform_index_p
from traxla.lowering.mlir import constant
from traxla.lowering.registry import mark_platform_sensitive, register_lowering

_ALIASES = {"gpu": "cuda"}


def _platform_index(ctx, *, platforms):
    platform = _ALIASES.get(ctx.module.platform, ctx.module.platform)
    for i, group in enumerate(platforms):
        if group is None or platform in group:
            return constant(np.int32(i), np.int32)
    raise NotImplementedError(
        f"lax.platform_dependent: the current lowering platform {platform} is not among the "
        f"platforms {[g for g in platforms if g is not None]} and there is no default branch.")


register_lowering(platform_index_p, _platform_index)
mark_platform_sensitive(platform_index_p)
