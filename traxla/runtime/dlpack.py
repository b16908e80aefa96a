"""DLPack interchange (``jax.dlpack``, ``jnp.from_dlpack``): an Array from any object with
``__dlpack__``/``__dlpack_device__`` (NumPy, PyTorch, JAX, ...), sharing its memory where
jaxlib can (an aligned CPU buffer), through the runtime's jaxlib adapter."""
from __future__ import annotations

import numpy as np
import ml_dtypes

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.runtime.xla_adapter import execution as xla
from traxla.runtime.array import ArrayImpl, intern_aval, make_array
from traxla.runtime.placement import device_put_placed, pinned_placement
from traxla.runtime.backend import Device, get_backend

SUPPORTED_DTYPES = frozenset({
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_})
_SUPPORTED = frozenset(np.dtype(t) for t in SUPPORTED_DTYPES)
_PLATFORM_OF_DL_DEVICE = {1: "cpu", 2: "cuda", 3: "cuda", 10: "rocm"}  # CPU, CUDA, CUDAHost


def is_supported_dtype(dtype) -> bool:
    """Whether ``dtype`` can cross DLPack (JAX's list)."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array, device=None, copy=None) -> ArrayImpl:
    """An Array of ``external_array``'s data, on the producer's device (JAX's rules)."""
    if not hasattr(external_array, "__dlpack__") or not hasattr(external_array,
                                                                "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        "__dlpack_device__ methods.")
    dl_type, local_id = external_array.__dlpack_device__()
    platform = _PLATFORM_OF_DL_DEVICE.get(int(dl_type))
    if platform is None:
        raise TypeError("Array passed to from_dlpack is on unsupported device type "
                        f"(DLDeviceType: {dl_type}, array: {external_array}")
    backend = get_backend("cpu" if platform == "cpu" else "gpu")
    capsule = external_array.__dlpack__(stream=None) if platform == "cpu" else \
        external_array.__dlpack__()
    try:
        raw_device, buf = xla.dlpack_to_buffer(capsule, backend.client, local_id, copy,
                                               int(dl_type))
    except xla.RuntimeErrorType as e:
        text = str(e)
        if "is not aligned to" in text:
            raise ValueError("Specified input which requires a copy since the source data "
                             f"buffer {text[text.index('is not aligned to'):]} However "
                             "copy=False. Set copy=True or copy=None to perform the requested "
                             "operation.") from None
        raise
    if device is not None and isinstance(device, Device) and device._device != raw_device \
            and copy is False:
        raise ValueError(f"Specified device={device} which requires a copy since the source "
                         f"device is {Device(raw_device)!r}, however copy=False. Set copy=True "
                         "or copy=None to perform the requested operation.")
    host = xla.to_numpy(buf)  # a view (CPU): the buffer came without an aval
    shape, dtype = tuple(host.shape), host.dtype
    # committed to the producer's device, as JAX's (jaxlib's arrays made here are)
    placement = pinned_placement(Device(raw_device))
    wanted = dtypes.canonicalize(dtype)
    if raw_device == backend.default_device and backend is get_backend() and wanted == dtype:
        # the producer's memory, shared where jaxlib could
        return make_array(intern_aval(ShapedArray(shape, dtype, False)), buf, placement)
    # another device than the default, or a 64-bit producer without x64 (canonicalized,
    # as JAX does): through the host
    return device_put_placed(np.asarray(host, wanted), ShapedArray(shape, wanted, False),
                             placement)
