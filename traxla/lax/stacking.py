"""Shapes of several arrays: ``broadcast_shapes`` (NumPy's rule, ranks promoted on the
left), and ``stack`` / ``unstack`` (along a new axis, with primitives of their own)."""
from __future__ import annotations

import operator

from traxla.primitives.shapes import _stack, _unstack


def broadcast_shapes(*shapes):
    """The NumPy-style broadcast of ``shapes`` (ranks promoted on the left)."""
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    if len(set(shapes)) == 1:
        return shapes[0]
    ndim = max(len(s) for s in shapes)
    padded = [(1,) * (ndim - len(s)) + s for s in shapes]
    out = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def stack(operands, axis=0):
    """The arrays ``operands`` stacked along a new ``axis`` (the ``stack`` primitive)."""
    return _stack(list(operands), axis)


def unstack(operand, axis=0):
    """``operand`` split into a tuple of arrays along ``axis`` (the ``unstack`` primitive)."""
    return tuple(_unstack(operand, axis))
