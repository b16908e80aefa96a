"""Runtime: PJRT clients, Arrays, compilation, the eager cache and dispatch.
Imports ``lowering/`` and ``ir/``; never traces."""
from .array import Array, device_put_numpy
from .backend import Device, devices, get_backend
from .dispatch import apply_primitive, to_array
from .executable import Executable, compile_jaxpr

__all__ = ["Array", "device_put_numpy", "Device", "devices", "get_backend", "apply_primitive",
           "to_array", "Executable", "compile_jaxpr"]
