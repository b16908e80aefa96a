"""``named_scope`` and ``named_call``: names for parts of a program that reach the
StableHLO op locations (``jit(f)/layer1/mul``) and the compiled HLO's ``op_name``
metadata, as JAX's name stack does; the jaxpr itself is unchanged."""
from __future__ import annotations

import contextlib
import functools

from traxla.ir.jaxpr import name_stack


@contextlib.contextmanager
def named_scope(name: str):
    """Within the block, operations are recorded under ``name`` (scopes nest)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    previous = name_stack.scopes
    name_stack.scopes = previous + (name,)
    try:
        yield
    finally:
        name_stack.scopes = previous


def named_call(fun, *, name: str | None = None):
    """``fun`` whose operations are recorded under ``name`` (default: its __name__)."""
    scope = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(scope):
            return fun(*args, **kwargs)
    return named


__all__ = ["named_scope", "named_call"]
