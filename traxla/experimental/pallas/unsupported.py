"""Names of JAX's Pallas API whose capability traxla does not have (GPU kernels, TPU
hardware state, multi-core meshes): each raises ``NotImplementedError`` naming the
capability when used (called or instantiated), never when imported."""
from __future__ import annotations

__all__ = ["unsupported_function", "unsupported_class"]


def _error(name, capability):
    return NotImplementedError(f"{name}: {capability} is not implemented by traxla")


def unsupported_function(name: str, capability: str):
    """A function named ``name`` that raises ``NotImplementedError`` when called."""
    def f(*args, **kwargs):
        raise _error(name, capability)
    f.__name__ = f.__qualname__ = name.rsplit(".", 1)[-1]
    f.__doc__ = f"Not implemented by traxla: {capability}."
    return f


def unsupported_class(name: str, capability: str):
    """A class named ``name`` that raises ``NotImplementedError`` when instantiated."""
    def __init__(self, *args, **kwargs):
        raise _error(name, capability)
    short = name.rsplit(".", 1)[-1]
    return type(short, (), {"__init__": __init__, "__doc__":
                            f"Not implemented by traxla: {capability}.",
                            "__module__": name.rsplit(".", 1)[0] if "." in name else None})
