"""``jit`` with JAX's handling of ``static_argnames``: names that are also positional
parameters are static whether passed by position or by keyword."""
from __future__ import annotations

import inspect

from traxla.api import jit


def jit_named(fn, name=None, static_argnames=()):
    if name is not None:
        fn.__name__ = name
    static_argnames = tuple(static_argnames)
    params = list(inspect.signature(fn).parameters.values())
    argnums = tuple(i for i, p in enumerate(params)
                    if p.name in static_argnames
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return jit(fn, static_argnums=argnums, static_argnames=static_argnames)
