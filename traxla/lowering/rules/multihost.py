"""Lowering the multihost conversions: inside a program they are the operand itself, as
JAX's (the placement is the argument's, made outside the program)."""
from __future__ import annotations

from traxla.ir.rules.multihost import (global_array_to_host_local_array_p,
                                       host_local_array_to_global_array_p)
from traxla.lowering.registry import register_lowering


def _identity(ctx, x, *, global_mesh, pspec):
    return x


register_lowering(host_local_array_to_global_array_p, _identity)
register_lowering(global_array_to_host_local_array_p, _identity)
