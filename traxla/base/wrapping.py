"""``wraps``: JAX's ``functools.wraps`` for the transformations (``vmap(f)``, ``grad(f)``...):
it copies what ``f`` has of a function's metadata and skips the rest, so any callable can
be transformed (one whose ``__name__`` is not a string included, which ``functools.wraps``
refuses)."""
from __future__ import annotations

import functools


def fun_name(fun, default_name: str = "<unnamed function>"):
    """``fun.__name__`` (a partial's function's), or ``default_name``."""
    name = getattr(fun, "__name__", None)
    if name is not None:
        return name
    if isinstance(fun, functools.partial):
        return fun_name(fun.func, default_name)
    return default_name


def wraps(wrapped, namestr: str | None = None, docstr: str | None = None, **kwargs):
    """As JAX's ``util.wraps``: the wrapper gets ``wrapped``'s ``__dict__``, annotations,
    name (``namestr.format(fun=name)`` when given), module, doc (``docstr.format(fun=name,
    doc=doc, **kwargs)``), qualname and ``__wrapped__``, as far as they can be set."""
    def wrapper(fun):
        try:
            name = fun_name(wrapped)
            doc = getattr(wrapped, "__doc__", "") or ""
            fun.__dict__.update(getattr(wrapped, "__dict__", {}))
            fun.__annotations__ = getattr(wrapped, "__annotations__", {})
            fun.__name__ = name if namestr is None else namestr.format(fun=name)
            fun.__module__ = getattr(wrapped, "__module__", "<unknown module>")
            fun.__doc__ = doc if docstr is None else docstr.format(fun=name, doc=doc, **kwargs)
            fun.__qualname__ = getattr(wrapped, "__qualname__", fun.__name__)
            fun.__wrapped__ = wrapped
        except Exception:  # noqa: BLE001  (what cannot be copied is left as it is)
            pass
        return fun
    return wrapper


def copy_dict(wrapper, wrapped, skip=None) -> None:
    """``wrapped.__dict__`` into ``wrapper``'s, as ``functools.wraps`` updates it (the keys
    ``skip(key)`` says are ``wrapped``'s own state left out, and ``__wrapped__``)."""
    own = getattr(wrapped, "__dict__", {})
    wrapper.__dict__.update({k: v for k, v in own.items()
                             if k != "__wrapped__" and not (skip is not None and skip(k))})
