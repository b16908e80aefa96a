"""Names of JAX modules whose capability traxla does not have (Mosaic GPU, jax2tf, Triton,
...): the module imports, and its functions and classes exist with JAX's names and kinds,
but calling a function, instantiating a class or using a constant's value raises
``NotImplementedError`` naming the capability. Nothing here returns a made-up result.

    from traxla.base.unsupported import fill
    fill(globals(), "Mosaic GPU kernels", functions="as_gpu_kernel ...", classes="...",
         constants="...")
"""
from __future__ import annotations

import types


class UnsupportedCapability(NotImplementedError):
    """Raised when a name of an unsupported JAX capability is used."""


def _message(qualname: str, capability: str) -> str:
    return (f"{qualname} is not supported by traxla: it needs {capability}, a capability "
            f"traxla does not have")


def _function(module: str, name: str, capability: str):
    qualname = f"{module}.{name}"

    def unsupported(*args, **kwargs):
        raise UnsupportedCapability(_message(qualname, capability))

    unsupported.__name__ = unsupported.__qualname__ = name
    unsupported.__module__ = module
    unsupported.__doc__ = f"Not supported: {capability}."
    return unsupported


def _class(module: str, name: str, capability: str):
    qualname = f"{module}.{name}"

    def __new__(cls, *args, **kwargs):
        raise UnsupportedCapability(_message(qualname, capability))

    return type(name, (), {"__new__": __new__, "__module__": module,
                           "__doc__": f"Not supported: {capability}."})


class UnsupportedValue:
    """A constant of an unsupported capability: any attribute, call or item use raises."""

    __slots__ = ("_qualname", "_capability")

    def __init__(self, qualname: str, capability: str):
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_capability", capability)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedCapability(_message(self._qualname, self._capability))

    def __getitem__(self, key):
        raise UnsupportedCapability(_message(self._qualname, self._capability))

    def __setitem__(self, key, value):
        raise UnsupportedCapability(_message(self._qualname, self._capability))

    def __iter__(self):
        raise UnsupportedCapability(_message(self._qualname, self._capability))

    def __repr__(self):
        return f"<{self._qualname}: not supported by traxla ({self._capability})>"


class UnsupportedModule(types.ModuleType):
    """A module of JAX's internals that an unsupported module imports under a short name
    (``ir``, ``mgpu``...): it is a module, and reading any name of it raises."""

    def __init__(self, name: str, capability: str):
        super().__init__(name, f"Not supported: {capability}.")
        self.__dict__["_capability"] = capability

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise UnsupportedCapability(_message(f"{self.__name__}.{attr}",
                                             self.__dict__["_capability"]))


def fill(namespace: dict, capability: str, functions: str = "", classes: str = "",
         constants: str = "", modules: str = "") -> None:
    """Adds to a module's ``namespace`` the unsupported ``functions``, ``classes``,
    ``constants`` and ``modules`` (space-separated names) of ``capability``; names already
    there are kept."""
    module = namespace["__name__"]
    made = {}
    for name in functions.split():
        made[name] = _function(module, name, capability)
    for name in classes.split():
        made[name] = _class(module, name, capability)
    for name in constants.split():
        made[name] = UnsupportedValue(f"{module}.{name}", capability)
    for name in modules.split():
        made[name] = UnsupportedModule(f"{module}.{name}", capability)
    for name, value in made.items():
        namespace.setdefault(name, value)


__all__ = ["fill", "UnsupportedCapability", "UnsupportedValue", "UnsupportedModule"]
