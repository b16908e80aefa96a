"""The TPU kernel operations of ``jax.experimental.pallas.tpu`` in interpret mode: local
DMAs (``make_async_copy``, ``async_copy``, ``sync_copy``), semaphores, ``bitcast``,
``roll``, masked ``load``/``store``.

Interpret mode runs one kernel invocation at a time, in program order (see
``kernel_refs``): a DMA copies when it starts and its ``wait`` only consumes the
semaphore's count; a semaphore wait never blocks. Operations that reach another device
(remote DMAs, barrier semaphores) or TPU hardware state (the PRNG, the MXU) raise
``NotImplementedError`` naming the capability."""
from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np

from traxla import lax
import traxla.numpy as jnp

__all__ = ["AsyncCopyDescriptor", "DeviceIdType", "async_copy", "async_remote_copy",
           "bitcast", "get_barrier_semaphore", "load", "make_async_copy",
           "make_async_remote_copy", "roll", "semaphore_read", "semaphore_signal",
           "semaphore_wait", "store", "sync_copy", "touch"]


class DeviceIdType(enum.Enum):
    MESH = "mesh"
    LOGICAL = "logical"


def _remote(what):
    return NotImplementedError(
        f"pallas interpret mode: {what} reaches another device (remote DMAs, barrier "
        "semaphores and device ids are not implemented by traxla)")


def _compiled() -> bool:
    """Whether a compiled (Mosaic) kernel is being traced: DMAs and semaphores are then
    equations of their own (``mosaic_memory``)."""
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    return in_compiled_kernel()


def _sem_add(sem, inc):
    if sem is not None:
        sem[...] = sem[...] + jnp.asarray(inc, np.int32)


@dataclasses.dataclass
class AsyncCopyDescriptor:
    """A DMA from ``src_ref`` to ``dst_ref`` signalling ``dst_sem``."""
    src_ref: Any
    dst_ref: Any
    dst_sem: Any
    src_sem: Any = None
    device_id: Any = None
    device_id_type: Any = None

    def start(self, priority: int = 0, *, add: bool = False):
        if _compiled():
            from traxla.experimental.pallas import mosaic_memory
            return mosaic_memory.dma_start(
                self.src_ref, self.dst_ref, self.dst_sem, src_sem=self.src_sem,
                device_id=self.device_id, device_id_type=self.device_id_type,
                priority=priority, add=add)
        if _traced_size(self.src_ref) or _traced_size(self.dst_ref):
            _masked_copy(self.src_ref, self.dst_ref, add)
        else:
            value = self.src_ref[...]
            if add:
                value = self.dst_ref[...] + value
            self.dst_ref[...] = value
        _sem_add(self.dst_sem, 1)
        _sem_add(self.src_sem, 1)

    def wait(self):
        if _compiled():
            if self.src_sem is not None:  # a remote copy: the send, then the receive
                self.wait_send()
            return self.wait_recv()
        _sem_add(self.dst_sem, -1)
        if self.src_sem is not None:
            self.wait_send()

    def wait_recv(self):
        if _compiled():
            from traxla.experimental.pallas import mosaic_memory
            return mosaic_memory.dma_wait(self.src_ref, self.dst_ref, self.dst_sem,
                                          device_id=self.device_id,
                                          device_id_type=self.device_id_type)
        _sem_add(self.dst_sem, -1)

    def wait_send(self):
        if _compiled():
            if self.src_sem is None:
                raise ValueError("Cannot `wait_send` on a local copy.")
            from traxla.experimental.pallas import mosaic_memory
            # (JAX waits on the send semaphore with source and destination swapped)
            return mosaic_memory.dma_wait(self.dst_ref, self.src_ref, self.src_sem,
                                          device_id=self.device_id,
                                          device_id_type=self.device_id_type,
                                          insert_dummy_device=True)
        _sem_add(self.src_sem, -1)


def _traced_size(ref) -> bool:
    """Whether a view of a ref slices it with a ``pl.ds`` of traced size (its shape then
    shows the dimension's bound; the DMA copies what the sizes say)."""
    from traxla.tracer import Tracer
    view = getattr(ref, "view", None)  # (an interpret-mode KernelRef's list of entries)
    if isinstance(view, list) and any(len(v) == 5 for v in view):
        return True
    for idx in getattr(ref, "chain", ()):
        for i in idx if isinstance(idx, tuple) else (idx,):
            if isinstance(getattr(i, "size", None), Tracer):
                return True
    return False


def _window(view, extents):
    """The open-mesh index of a kernel ref view's window of ``extents`` (one per sliced
    dimension) in the underlying array, and each sliced dimension's size (traced or not)."""
    index, sizes, k = [], [], 0
    for v in view:
        if v[0] == "int":
            index.append(jnp.asarray(v[1], np.int32))
            continue
        shape = [1] * len(extents)
        shape[k] = extents[k]
        steps = jnp.arange(extents[k], dtype=np.int32) * v[3]
        index.append((jnp.asarray(v[1], np.int32) + steps).reshape(shape))
        sizes.append(v[4] if len(v) == 5 else v[2])
        k += 1
    return index, sizes


def _masked_copy(src_ref, dst_ref, add):
    """Interpret mode's DMA between views sliced with a traced size: the elements of the
    window that the sizes cover, gathered and scattered (the rest of ``dst_ref`` kept)."""
    from traxla.tracer import Tracer
    extents = [min(a, b) for a, b in zip(src_ref.shape, dst_ref.shape)]
    src_index, src_sizes = _window(src_ref.view, extents)
    dst_index, dst_sizes = _window(dst_ref.view, extents)
    mask = jnp.ones(tuple(extents), bool)
    for k, (a, b) in enumerate(zip(src_sizes, dst_sizes)):
        shape = [1] * len(extents)
        shape[k] = extents[k]
        size = a if isinstance(a, Tracer) else b
        mask = mask & (jnp.arange(extents[k], dtype=np.int32).reshape(shape) < size)
    src_full, dst_full = src_ref.base[...], dst_ref.base[...]
    values = src_full[tuple(jnp.clip(i, 0, n - 1) for i, n in zip(src_index, src_full.shape))]
    if add:
        values = values + dst_full[tuple(jnp.clip(i, 0, n - 1)
                                         for i, n in zip(dst_index, dst_full.shape))]
    # (where the mask is off, an index past the end: the scatter drops it)
    dst_index = tuple(jnp.where(mask, i, n) for i, n in zip(dst_index, dst_full.shape))
    dst_ref.base[...] = dst_full.at[dst_index].set(values.astype(dst_full.dtype), mode="drop")


def make_async_copy(src_ref, dst_ref, sem):
    """A DMA descriptor copying ``src_ref`` into ``dst_ref`` (call ``.start()``,
    ``.wait()``)."""
    if tuple(src_ref.shape) != tuple(dst_ref.shape) and not (
            _traced_size(src_ref) or _traced_size(dst_ref)):
        raise ValueError(f"Cannot copy a ref of shape {tuple(src_ref.shape)} into one of "
                         f"shape {tuple(dst_ref.shape)}")
    return AsyncCopyDescriptor(src_ref, dst_ref, sem)


def async_copy(src_ref, dst_ref, sem, *, priority: int = 0, add: bool = False):
    """Starts a DMA and returns its descriptor."""
    copy = make_async_copy(src_ref, dst_ref, sem)
    copy.start(priority=priority, add=add)
    return copy


def sync_copy(src_ref, dst_ref, *, add: bool = False):
    """Copies ``src_ref`` into ``dst_ref`` (adds, with ``add=True``)."""
    if _compiled():
        from traxla.experimental.pallas import mosaic_memory
        return mosaic_memory.sync_copy(src_ref, dst_ref, add=add)
    if _traced_size(src_ref) or _traced_size(dst_ref):
        return _masked_copy(src_ref, dst_ref, add)
    value = src_ref[...]
    dst_ref[...] = dst_ref[...] + value if add else value


def make_async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                           device_id_type=DeviceIdType.MESH):
    """A DMA to ``dst_ref`` on the device ``device_id`` (a compiled kernel inside a
    ``shard_map``; interpret mode does not reach other devices)."""
    if not _compiled():
        raise _remote("make_async_remote_copy")
    copy = AsyncCopyDescriptor(src_ref, dst_ref, recv_sem, send_sem, device_id)
    copy.device_id_type = device_id_type
    return copy


def async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                      device_id_type=DeviceIdType.MESH):
    """Starts a remote DMA and returns its descriptor."""
    copy = make_async_remote_copy(src_ref, dst_ref, send_sem, recv_sem, device_id,
                                  device_id_type)
    copy.start()
    return copy


def get_barrier_semaphore():
    """The barrier semaphore of the call's ``collective_id`` (a compiled kernel inside a
    ``shard_map``; interpret mode does not reach other devices)."""
    if not _compiled():
        raise _remote("get_barrier_semaphore")
    from traxla.ir.rules.pallas_memory import get_barrier_semaphore_p
    return get_barrier_semaphore_p.bind()


def semaphore_signal(sem_or_view, inc=1, *, device_id=None, device_id_type=None,
                     core_index=None):
    """Adds ``inc`` to a semaphore."""
    if _compiled():
        if core_index is not None:
            raise NotImplementedError("semaphore_signal with a core_index (another core) is "
                                      "not implemented by traxla's Mosaic lowering")
        from traxla.experimental.pallas import mosaic_memory
        return mosaic_memory.semaphore_signal(sem_or_view, inc, device_id=device_id,
                                              device_id_type=device_id_type)
    if device_id is not None:
        raise _remote("semaphore_signal with a device_id")
    _sem_add(sem_or_view, inc)


def semaphore_wait(sem_or_view, value=1, *, decrement: bool = True):
    """Waits for a semaphore to reach ``value`` and takes it (never blocks here: the
    kernel's invocations run in order)."""
    if _compiled():
        from traxla.experimental.pallas import mosaic_memory
        return mosaic_memory.semaphore_wait(sem_or_view, value, decrement)
    if decrement:
        _sem_add(sem_or_view, -jnp.asarray(value, np.int32))


def semaphore_read(sem_or_view):
    """A semaphore's current count."""
    if _compiled():
        from traxla.experimental.pallas import mosaic_memory
        return mosaic_memory.semaphore_read(sem_or_view)
    return sem_or_view[...]


def _bits(dtype) -> int:
    dtype = np.dtype(dtype)
    return 4 if dtype.name in ("int4", "uint4", "float4_e2m1fn") else dtype.itemsize * 8


def bitcast(x, ty):
    """Reinterprets the bits of ``x`` as ``ty``, packing or unpacking along the second
    minor dimension (``pltpu.bitcast``)."""
    ty = np.dtype(ty)
    if hasattr(x, "base") and hasattr(x, "view"):  # a kernel ref: a bitcast view of it
        return x.bitcast(ty)
    if len(x.shape) < 2:
        raise ValueError("Not implemented: bitcast 1D")
    src_bits, dst_bits = _bits(x.dtype), _bits(ty)
    if x.shape[-2] * src_bits % dst_bits:
        raise ValueError("Not implemented: the 2nd minor dim can not be perfectly packed or"
                         " unpacked")
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    if in_compiled_kernel():  # one equation, Mosaic's tpu.bitcast
        from traxla.ir.rules.pallas import bitcast_p
        return bitcast_p.bind(x, ty=ty)
    if src_bits < dst_bits:
        *leading, m, n = x.shape
        packing = dst_bits // src_bits
        x = jnp.swapaxes(x.reshape(*leading, m // packing, packing, n), -1, -2)
        return lax.bitcast_convert_type(x, ty)
    if src_bits > dst_bits:
        y = lax.bitcast_convert_type(x, ty)
        *leading, m, n, packing = y.shape
        return jnp.swapaxes(y, -1, -2).reshape(*leading, m * packing, n)
    return lax.bitcast_convert_type(x, ty)


def roll(x, shift, axis: int, *, stride: int | None = None, stride_axis: int | None = None):
    """``jnp.roll(x, shift, axis)``; with ``stride``, slice ``i`` along ``stride_axis``
    rolls by ``shift + i * stride`` (``pltpu.roll``)."""
    if isinstance(shift, int) and shift < 0:
        raise ValueError("shift must be non-negative.")
    if axis < 0 or axis >= len(x.shape):
        raise ValueError("axis is out of range.")
    if (stride is None) != (stride_axis is None):
        raise ValueError("stride and stride_axis must be both specified or not.")
    if stride is not None:
        if stride < 0:
            raise ValueError("stride must be non-negative.")
        if stride_axis < 0 or stride_axis >= len(x.shape):
            raise ValueError("stride_axis is out of range")
        if axis == stride_axis:
            raise ValueError("expected axis and stride_axis are different.")
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    if in_compiled_kernel():  # one equation, Mosaic's tpu.dynamic_rotate
        from traxla.ir.rules.pallas import roll_p
        return roll_p.bind(x, shift, axis=axis, stride=stride, stride_axis=stride_axis)
    if stride is None:
        return jnp.roll(x, shift, axis)
    parts = jnp.split(x, x.shape[stride_axis], stride_axis)
    return jnp.concatenate([jnp.roll(p, shift + i * stride, axis)
                            for i, p in enumerate(parts)], stride_axis)


def load(ref, *, mask=None):
    """``ref[...]``; where ``mask`` is False the value is unspecified (here: zero)."""
    value = ref[...]
    return value if mask is None else jnp.where(mask, value, jnp.zeros_like(value))


def store(ref, val, *, mask=None):
    """``ref[...] = val``, only where ``mask`` holds."""
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    if mask is not None and in_compiled_kernel():  # JAX's masked swap
        from traxla.experimental.pallas.mosaic_memory import masked_store
        masked_store(ref, val, mask)
        return
    if mask is not None:
        val = jnp.where(mask, val, ref[...])
    ref[...] = val


def touch(ref):
    """A fake read-write dependency on ``ref`` (ordering only: nothing to do when the
    kernel runs in program order)."""
