"""Runtime: PJRT clients, Arrays, compilation, the eager cache and dispatch.
Imports ``lowering/`` and ``ir/``; never traces."""
from traxla.runtime.array import Array, device_put_numpy
from traxla.runtime.backend import Device, devices, get_backend
from traxla.runtime.dispatch import apply_primitive, to_array
from traxla.runtime.executable import Executable, compile_jaxpr

__all__ = ["Array", "device_put_numpy", "Device", "devices", "get_backend", "apply_primitive",
           "to_array", "Executable", "compile_jaxpr"]
