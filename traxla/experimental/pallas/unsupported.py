"""Names of JAX's Pallas API whose capability traxla does not have (GPU kernels, TPU
hardware state, multi-core meshes): each raises ``NotImplementedError`` naming the
capability when used (called or instantiated), never when imported. The shared
machinery of every unsupported JAX name is ``traxla.base.unsupported``."""
from __future__ import annotations

from traxla.base.unsupported import _class, _function

__all__ = ["unsupported_function", "unsupported_class"]


def _split(name: str):
    module, _, short = name.rpartition(".")
    return module or "traxla.experimental.pallas", short


def unsupported_function(name: str, capability: str):
    """A function named ``name`` that raises ``NotImplementedError`` when called."""
    return _function(*_split(name), capability)


def unsupported_class(name: str, capability: str):
    """A class named ``name`` that raises ``NotImplementedError`` when instantiated."""
    return _class(*_split(name), capability)
