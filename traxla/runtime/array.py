"""traxla's Array: a device buffer and its aval. Operators are installed by
``traxla.numpy`` (the runtime binds no primitives itself)."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.tokens import abstract_token
from traxla.ir.avals import ShapedArray, interned
from traxla.ir.dtypes import ExtendedDType, float0
from traxla.ir.thread_state import unusual as _unusual
from traxla.runtime import transfer_guard
from traxla.runtime.xla_adapter import execution as xla
from traxla.runtime.backend import get_backend
from traxla.runtime.placement import (SingleDeviceSharding, Shard, _config_values, assemble,
                                      public_sharding,
                                      default_placement, device_put_placed,
                                      device_replica_id_map)
from traxla.tracer.traces import Tracer


_block_until_ready = xla.block_until_ready


class ArrayMeta(type):
    """``isinstance(x, Array)`` holds for device arrays and, as in JAX (whose C++ check
    takes any tracer), for every tracer, a traced ref's included (so code that tells arrays
    from static leaves this way works under jit, grad and vmap); NumPy arrays, scalars and
    concrete refs are not Arrays."""

    def __instancecheck__(cls, x):
        if type.__instancecheck__(cls, x):
            return True
        return cls is Array and isinstance(x, Tracer)


class Array(metaclass=ArrayMeta):
    """``jax.Array``: the type of arrays and of traced arrays, for instance checks and
    annotations. Device arrays are ``ArrayImpl``; traxla code tests for that class.

    As JAX's base class it names every attribute of an array: the ones below, which
    ``ArrayImpl`` implements, and the operators, methods and properties ``traxla.numpy``
    installs, which it adds here as abstract methods (``Cannot call abstract method``)."""

    __slots__ = ("__weakref__",)
    __hash__ = None

    @property
    def __numpy_dtype__(self) -> np.dtype:
        """NumPy's dtype protocol, deprecated as JAX's: ``dtype=arr`` warns."""
        import warnings
        warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather than "
                      "dtype=arr use dtype=arr.dtype. In the future this will result in an "
                      "error.", DeprecationWarning, stacklevel=2)
        return self.dtype

    @property
    def dtype(self) -> np.dtype:
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        raise NotImplementedError

    @property
    def size(self) -> int:
        raise NotImplementedError

    @property
    def shape(self) -> tuple:
        raise NotImplementedError

    def addressable_data(self, index: int):
        """An array of data in the ``index``-th addressable shard."""
        raise NotImplementedError

    @property
    def addressable_shards(self):
        """The shards of the array on this process's devices."""
        raise NotImplementedError

    @property
    def global_shards(self):
        """The shards of the array on every device."""
        raise NotImplementedError

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device of the array's sharding is this process's."""
        raise NotImplementedError

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        raise NotImplementedError

    @property
    def sharding(self):
        """The array's sharding."""
        raise NotImplementedError

    @property
    def committed(self) -> bool:
        """Whether the array was put on its device(s) on purpose."""
        raise NotImplementedError

    @property
    def device(self):
        """The array's device, or its sharding when it spans several."""
        raise NotImplementedError

    def copy_to_host_async(self):
        """Starts the copy of the array's value to the host."""
        raise NotImplementedError


Array.__module__ = "traxla"


class ArrayImpl(Array):
    """A value on device(s): its aval, the jaxlib buffer, and (when it spans several
    devices) its placement; ``_placement is None`` means the default device."""

    # No ``__init__``: ``ArrayImpl()`` is then a C-level allocation (about 75 ns less than
    # ``object.__new__(ArrayImpl)``, 130 ns less than a Python ``__init__``), which the hit
    # paths fill in themselves; elsewhere ``make_array(aval, buf, placement)``.
    __slots__ = ("aval", "_buf", "_npy", "_placement")  # (__weakref__: Array's)
    __array_priority__ = 100
    __traxla_array__ = True

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    @property
    def committed(self) -> bool:
        """Whether the array was put on its device on purpose (``device_put`` to a device or
        sharding, a program's placed result), as JAX's ``Array.committed``; arrays on the
        default device, and those ``default_device`` placed, follow the computation."""
        return self._placement is not None and self._placement.committed

    _committed = committed

    # -- host interop -----------------------------------------------------------
    def _value(self) -> np.ndarray:
        if isinstance(self.aval.dtype, ExtendedDType):
            raise TypeError(f"traxla array with {self.aval.dtype} dtype cannot be converted to a "
                            "NumPy array. Use traxla.random.key_data(arr) to get its raw bits.")
        check_not_deleted((self,))  # as JAX's, even when the value was read before
        value = self._npy
        if value is None:
            if self.aval.dtype == float0:
                value = self._npy = np.zeros(self.shape, float0)
            else:
                transfer_guard.device_to_host(self.shape, self.dtype,
                                              lambda: next(iter(self.devices())))
                value = self._npy = read_back(self)
        return value

    def __array__(self, dtype=None, copy=None):
        value = self._value()
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        return value.copy() if copy else value

    def block_until_ready(self):
        _block_until_ready(self._buf)
        return self

    def is_deleted(self) -> bool:
        return xla.is_deleted(self._buf)

    def delete(self):
        xla.delete(self._buf)

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def __bool__(self):
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __index__(self):
        return int(self._value().__index__())

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    __hash__ = None  # unhashable, as JAX's

    def __hex__(self):
        return hex(self.__index__())

    def __oct__(self):
        return oct(self.__index__())

    def unsafe_buffer_pointer(self) -> int:
        buf = self._buf
        if self._placement is not None:
            if self._placement.num_devices != 1:
                raise ValueError("unsafe_buffer_pointer() is supported only for unsharded "
                                 "arrays.")
            buf = xla.per_device_buffers(buf)[0][1]
        check_not_deleted((self,))
        return xla.unsafe_buffer_pointer(buf)

    def __reduce__(self):
        """Pickles the host value (keys: their raw data) and the weak type; unpickling
        transfers it to the default device, as JAX's does."""
        return (_reconstruct_array, (self.physical_value(), self.aval.dtype, self.aval.weak_type))

    def __copy__(self):
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __format__(self, spec):
        return format(self._value(), spec) if not self.aval.shape else format(str(self), spec)

    def __str__(self):
        if isinstance(self.aval.dtype, ExtendedDType):
            return repr(self)
        return str(self._value())

    def physical_value(self) -> np.ndarray:
        """The stored array: for extended dtypes (keys), the raw uint32 data."""
        if isinstance(self.aval.dtype, ExtendedDType):
            return xla.to_numpy(self._buf)
        return self._value()

    def __repr__(self):
        if isinstance(self.aval.dtype, ExtendedDType):
            bits = xla.to_numpy(self._buf)
            return (f"Array({self.shape}, dtype={self.aval.dtype}) overlaying:\n{bits}")
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True)" if self.aval.weak_type else ")")
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.shape}"
        else:
            body = np.array2string(self._value(), prefix=prefix, suffix=",", separator=", ",
                                   max_line_width=width)
        last = len(body) - body.rfind("\n") + 1
        sep = " " * len(prefix) if last + len(dtype_str) + 1 > width else " "
        return f"{prefix}{body},{sep}{dtype_str}"

    def devices(self):
        return self.sharding.device_set

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this (one-device) array, as JAX's ``Array.__dlpack__``."""
        if len(self.devices()) > 1:
            raise BufferError(
                "to_dlpack can only pack a dlpack tensor from an array on a singular device, "
                f"but an array with a Sharding over {len(self.devices())} devices was provided.")
        if max_version is not None and tuple(max_version) < (0, 5):
            raise BufferError(f"JAX does not support any version below (0, 5) but version "
                              f"({max_version}) was requested.")
        if dl_device is not None and tuple(dl_device) != tuple(self.__dlpack_device__()):
            raise BufferError("traxla exports a DLPack tensor on the array's own device only; "
                              "device_put it first.")
        source = self.copy() if copy else self
        check_not_deleted((source,))
        buf = source._buf
        if source._placement is not None:  # a one-device mesh: that device's buffer
            buf = xla.per_device_buffers(buf)[0][1]
        return xla.buffer_to_dlpack(buf, stream=stream)

    def __dlpack_device__(self):
        device = next(iter(self.devices()))
        if device.platform == "cpu":
            return 1, 0  # (DLDeviceType.kDLCPU, 0)
        if device.platform in ("gpu", "cuda"):
            return 2, device.local_hardware_id  # kDLCUDA
        raise BufferError(f"__dlpack__ device only supported for CPU and GPU, got "
                          f"{device.platform}")

    @property
    def device(self):
        """The array's device, or its sharding when it spans several (as JAX's)."""
        check_not_deleted((self,))
        if self._placement is None:
            return get_backend().devices[0]
        sharding = self.sharding
        devices = sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else sharding

    @property
    def sharding(self):
        placement = self._placement
        if placement is None:
            return SingleDeviceSharding(get_backend().devices[0])
        return public_sharding(placement)

    @property
    def addressable_shards(self):
        """One Shard per device: its device, the index of its block and the data."""
        full = tuple(slice(None) for _ in self.shape)
        if self._placement is None:  # as JAX's: a one-device array's shard data is itself
            return [Shard(get_backend().devices[0], full, self)]
        if self._placement.num_devices == 1:
            return [Shard(next(iter(self._placement.device_set)), full, self)]
        replicas = device_replica_id_map(self._placement, self.shape)
        by_id = dict(xla.per_device_buffers(self._buf))
        out = []
        for d, idx in self._placement.devices_indices_map(self.shape).items():
            if d.id in by_id:  # (a committed one-device Array of the block)
                shape = tuple(len(range(*s.indices(n))) for s, n in zip(idx, self.shape))
                data = make_array(self.aval.update(shape=shape, sharding=None), by_id[d.id],
                                  SingleDeviceSharding(d)._as_named())
                out.append(Shard(d, idx, data, replicas[d]))
        return out

    def addressable_data(self, index: int):
        """The ``index``-th addressable shard's data (as JAX's)."""
        return self.addressable_shards[index].data

    @property
    def is_fully_addressable(self) -> bool:
        return self.sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self.sharding.is_fully_replicated

    @property
    def global_shards(self):
        """Every device's shard (this process holds them all)."""
        if not self.is_fully_addressable:
            raise NotImplementedError("Array.global_shards of an array spanning several "
                                      "processes: traxla holds this process's shards only")
        return self.addressable_shards

    def is_ready(self) -> bool:
        """Whether the computation producing the array has finished."""
        check_not_deleted((self,))
        return self._buf.is_ready()

    def on_device_size_in_bytes(self) -> int:
        """The bytes the array's buffers take on device (all devices' together)."""
        check_not_deleted((self,))
        if self._placement is None:
            return self._buf.on_device_size_in_bytes()
        return sum(b.on_device_size_in_bytes() for _, b in xla.per_device_buffers(self._buf))

    def platform(self) -> str:
        return next(iter(self.devices())).platform

    @property
    def device_buffer(self):
        raise AttributeError("arr.device_buffer has been deprecated. Use arr.addressable_data(0)")

    @property
    def device_buffers(self):
        raise AttributeError("arr.device_buffers has been deprecated. Use [x.data for x in "
                             "arr.addressable_shards]")

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("__cuda_array_interface__ is only defined for GPU buffers."
                             if self.platform() == "cpu" else
                             "traxla exports device buffers by __dlpack__ only")

    def copy_to_host_async(self):
        """Starts the copy of the value to the host, which later reads take (as JAX's;
        here the copy completes before the call returns)."""
        check_not_deleted((self,))
        if not isinstance(self.aval.dtype, ExtendedDType):
            self._value()

    def tobytes(self, order="C"):
        return np.asarray(self).tobytes(order)

    def copy(self):
        """A copy with the same placement (committed as this one is), as JAX's."""
        if isinstance(self.aval.dtype, ExtendedDType):
            return _reconstruct_array(np.array(self.physical_value()), self.aval.dtype,
                                      self.aval.weak_type)
        placement = self._placement
        if placement is not None and hasattr(placement, "spec"):  # (a NamedSharding)
            return device_put_placed(np.array(self._value()),
                                     self.aval.update(sharding=None), placement)
        return device_put_numpy(np.array(self._value()), self.aval)


def make_array(aval: ShapedArray, buf, placement=None) -> ArrayImpl:
    """An Array of ``buf`` (a jaxlib array) with ``aval``; ``placement``: its layout over
    several devices (None: the default device)."""
    out = ArrayImpl()
    out.aval = aval
    out._buf = buf
    out._npy = None
    out._placement = placement
    return out


array_from_buffer = make_array  # the name the dispatch paths use (a default-device result)


def arrays_from_buffers(avals, bufs) -> list:
    """``[Array(aval, buf) ...]`` as ``array_from_buffer`` builds them."""
    outs = []
    put = outs.append
    for aval, buf in zip(avals, bufs):
        out = ArrayImpl()
        out.aval = aval
        out._buf = buf
        out._npy = None
        out._placement = None
        put(out)
    return outs


class Token:
    """An XLA token (``lax.create_token``, ``lax.after_all``): the device buffer that
    orders side effects; it holds no data."""

    __slots__ = ("_buf",)
    _placement = None
    _npy = None

    def __init__(self, buf):
        self._buf = buf

    @property
    def aval(self):
        return abstract_token

    def block_until_ready(self):
        self._buf.block_until_ready()
        return self


def _reconstruct_array(host, dtype, weak_type):
    """An unpickled Array: ``host`` (for keys, their raw data) on the default device."""
    if isinstance(dtype, ExtendedDType):
        shape = host.shape[:host.ndim - len(dtype.physical_shape)]
        backend = get_backend()
        phys = ShapedArray(host.shape, host.dtype)
        buf = xla.device_put(host, phys, backend.default_device, backend.default_sharding)
        return make_array(intern_aval(ShapedArray(shape, dtype, weak_type)), buf)
    return device_put_numpy(np.asarray(host, dtype), ShapedArray(host.shape, dtype, weak_type))


def check_not_deleted(arrays):
    """JAX's error for an Array whose buffer was deleted or donated to a computation."""
    for a in arrays:
        if xla.is_deleted(a._buf):
            raise RuntimeError(f"Array has been deleted with shape={a.aval.str_short(False)}.")


def device_put_numpy(host: np.ndarray, aval: ShapedArray) -> ArrayImpl:
    """Transfers ``host`` (already of ``aval.dtype``) to the default device (the one
    ``default_device`` names, when it names another)."""
    backend = get_backend()
    aval = intern_aval(aval)
    transfer_guard.host_to_device(aval, lambda: default_sharding(backend))
    if host.dtype == float0:  # no bytes to send: stored as false booleans, as JAX passes them
        host = np.zeros(host.shape, np.bool_)
        buf = xla.device_put(host, aval.update(dtype=host.dtype), backend.default_device,
                             backend.default_sharding)
        return make_array(aval, buf)
    if _config_values.default_device is not None or _unusual:  # (a mesh context too)
        placement = default_placement()
        if placement is not None:
            return device_put_placed(host, aval, placement)
    buf = xla.device_put(host, aval, backend.default_device, backend.default_sharding)
    return make_array(aval, buf)


def default_sharding(backend=None):
    """Where a transfer without a placement goes: for the transfer guards' messages."""
    placement = default_placement()
    if placement is not None:
        return placement
    return SingleDeviceSharding((backend or get_backend()).local_devices[0])


def to_default_device(host: np.ndarray, aval: ShapedArray) -> ArrayImpl:
    """``host`` on the default backend's first device, whatever ``default_device`` says."""
    backend = get_backend()
    transfer_guard.host_to_device(aval, lambda: default_sharding(backend))
    return make_array(intern_aval(aval), xla.device_put(host, aval, backend.default_device,
                                                        backend.default_sharding))


# Equal avals as one object (transfers' and programs' outputs): the cached-call paths
# compare signatures by identity first, and ``ShapedArray.__eq__`` is Python code (about
# 0.2 us a comparison). Avals are immutable, so sharing them changes nothing else.
intern_aval = interned


_bitcast_readers: dict = {}


def read_back(array: ArrayImpl) -> np.ndarray:
    dtype = array.aval.dtype
    if array._placement is not None:
        if not xla.buffer_protocol_supports(dtype):
            raise NotImplementedError(f"reading back a multi-device {dtype} array")
        return assemble(array._buf, array._placement, array.shape, dtype)
    if xla.buffer_protocol_supports(dtype):
        return xla.to_numpy(array._buf)
    # bf16: the buffer protocol refuses it; bitcast to uint16 on device and view.
    return xla.to_numpy(_runtime_dispatch.bitcast_to_uint(array)._buf).view(dtype)

import traxla.runtime.dispatch as _runtime_dispatch  # noqa: E402  (it imports this module: bound once both are defined)

