"""``Partial``: ``functools.partial`` as a pytree (the bound arguments are its leaves)."""
from __future__ import annotations

import functools

from traxla.base.pytree_registry import register_pytree_node


class _HashableCallableShim:
    """Delegates call, hash and equality to ``fun``: boxes a ``functools.partial`` so
    that ``Partial`` does not merge its arguments into its own."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """``functools.partial`` as a pytree: the bound arguments are its leaves and the
    function is static, so a ``Partial`` can be passed through ``jit``, ``vmap``..."""

    def __new__(klass, func, *args, **kw):
        if isinstance(func, functools.partial):
            original = func
            func = _HashableCallableShim(original)
            out = super().__new__(klass, func, *args, **kw)
            func.func, func.args, func.keywords = original.func, original.args, original.keywords
            return out
        return super().__new__(klass, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda partial_: ((partial_.args, partial_.keywords), partial_.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)
