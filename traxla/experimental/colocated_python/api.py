"""``jax.experimental.colocated_python``: run a Python function (or the methods of a
Python object) on the CPU devices colocated with the devices of its arguments.

As JAX's, the function is shipped to the hosts of those devices serialized with
``cloudpickle`` (so without cloudpickle installed a call raises JAX's
``ModuleNotFoundError``). traxla's backends are single-process: the colocated host is
this one, and the deserialized function runs here, on the argument Arrays themselves.
"""
from __future__ import annotations


import numpy as np

from traxla.experimental.colocated_python.func import (_ColocatedFunction, _Specialization,
                                                      _run)
from traxla.experimental.colocated_python import serialization
from traxla.runtime.backend import devices as _devices
from traxla.runtime.placement import Mesh

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh):
    """The CPU devices colocated with ``devices_or_mesh`` (a sequence of devices, or a
    mesh: then a mesh of the same shape); a CPU device is its own colocated device."""
    if isinstance(devices_or_mesh, Mesh):
        mesh = devices_or_mesh
        flat = colocated_cpu_devices(tuple(mesh.devices.flat))
        grid = np.empty(len(flat), dtype=object)
        grid[:] = flat
        return Mesh(grid.reshape(mesh.devices.shape), mesh.axis_names, mesh.axis_types)
    devices = tuple(devices_or_mesh)
    if all(d.platform == "cpu" for d in devices):
        return list(devices)
    per_process: dict = {}
    for d in reversed(list(_devices("cpu"))):
        per_process.setdefault(d.process_index, []).append(d)
    out = []
    for d in devices:
        try:
            out.append(per_process.get(d.process_index, []).pop())
        except IndexError:
            raise ValueError(
                f"Process {d.process_index} does not have enough local CPU devices") from None
    return out


def colocated_python(fun):
    """``fun`` as a colocated Python callable, without specialization."""
    return _ColocatedFunction(fun)


def colocated_python_class(cls):
    """A wrapper class whose instances keep their constructor's arguments; the real
    object is made (on the colocated host) at the first method call, and each method
    call runs there."""

    class Wrapper:
        def __init__(self, *args, **kwargs):
            self._ctor = (args, kwargs)
            self._instance = None

        def _real(self):
            if self._instance is None:  # the class and its arguments, shipped once
                real_cls, args, kwargs = serialization._deserialize(
                    serialization._serialize((cls, *self._ctor)))
                self._instance = real_cls(*args, **kwargs)
            return self._instance

        def __getattr__(self, name):
            if name.startswith("_"):
                raise AttributeError(name)
            getattr(cls, name)  # AttributeError for a name the class does not have

            def method(*args, **kwargs):
                return _run(_Specialization(), getattr(self._real(), name), args, kwargs)
            return method

    Wrapper.__name__ = Wrapper.__qualname__ = cls.__name__
    Wrapper.__doc__ = cls.__doc__
    return Wrapper


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any
from typing import overload
import collections
import traxla as jax
import traxla._src.api_util as api_util
import traxla._src.util as util
from traxla.base.unsupported import fill as _fill  # noqa: E402

_fill(globals(), "JAX's IFRT internals of colocated Python (traxla implements its API its own way)",
      functions='make_callable wrap_class')
