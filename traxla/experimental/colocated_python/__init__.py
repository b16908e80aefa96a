"""``jax.experimental.colocated_python``: run a Python function (or the methods of a
Python object) on the CPU devices colocated with the devices of its arguments (see
``api``); ``func`` and ``serialization`` are JAX's submodules of the same names."""
from traxla.experimental.colocated_python import func, serialization  # noqa: F401
from traxla.experimental.colocated_python.api import (  # noqa: F401
    colocated_cpu_devices, colocated_python, colocated_python_class)

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]
