"""``traxla.dlpack``: arrays from DLPack tensors (``from_dlpack``) and which dtypes DLPack
carries (``is_supported_dtype``), as ``jax.dlpack``. traxla reads a host (CPU) tensor
through NumPy's DLPack import and places it on the device."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from traxla.api import device_put
from traxla.numpy import from_dlpack as _from_dlpack

__all__ = ["from_dlpack", "is_supported_dtype"]

SUPPORTED_DTYPES = tuple(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_))
SUPPORTED_DTYPES_SET = frozenset(SUPPORTED_DTYPES)

_KDL_CPU = 1  # DLDeviceType.kDLCPU


def is_supported_dtype(dtype) -> bool:
    """Check if dtype is supported by traxla.dlpack."""
    if dtype is None:
        # NumPy would silently read None as float64
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES_SET


def from_dlpack(external_array, device=None, copy: bool | None = None):
    """Returns an Array holding the data of a DLPack tensor (an object with
    ``__dlpack__`` and ``__dlpack_device__``), placed on ``device`` when given."""
    device_set = getattr(device, "device_set", None)
    if device_set is not None and len(device_set) > 1:
        raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, "
                         f"but a Sharding with {len(device_set)} devices was provided.")
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dl_device_type, _ = external_array.__dlpack_device__()
    if int(dl_device_type) != _KDL_CPU:
        raise TypeError("Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_device_type}, array: {external_array}")
    out = _from_dlpack(external_array, copy=copy)
    return out if device is None else device_put(out, device)
