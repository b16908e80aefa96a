"""``pltpu.emit_pipeline``: a software pipeline written inside a Pallas TPU kernel, over the
kernel's own DMAs, semaphores and ``pl.run_scoped`` buffers (JAX's
``jax/_src/pallas/mosaic/pipeline.py``, whose schedule this follows operation for
operation, so that the Mosaic module is JAX's).

``emit_pipeline(body, grid=..., in_specs=..., out_specs=...)(*refs)`` runs ``body`` once
per point of ``grid`` on blocks of ``refs`` (refs in HBM or ``pl.ANY``) copied into VMEM
buffers of ``buffer_count`` slots (two by default, ``pl.Buffered(n)`` in a block spec):
while the body works on one slot, the DMA of the next block fills another, and the output
block of the step before is written back. A :class:`BufferedRef` is one such buffered
operand (its VMEM window, its DMA semaphores, and the slot counters the loop carries).

As in JAX, the DMA slices depend on the TPU's memory tiling, read from the default
device's kind: where that is not a TPU (a CPU), building the pipeline raises
``ValueError: Unsupported TPU device kind: cpu``, in interpret mode too (traxla has no
abstract device to name a TPU by, as JAX's abstract mesh can).

The schedule itself (the loop, its DMAs and waits) is ``tpu_pipeline_schedule``."""
from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np

from traxla import lax, tree_util
from traxla.experimental.pallas import core as plcore
from traxla.experimental.pallas.helpers import multiple_of
from traxla.experimental.pallas.kernel_refs import Slice, ds
import traxla.numpy as jnp

__all__ = ["BufferType", "BufferedRef", "BufferedRefBase", "Tiling"]


# -- the TPU's tiling (JAX's tpu_info.infer_tiling) ----------------------------------------

_GENERATIONS = {"v2": 2, "v3": 3, "v4": 4, "v5": 5, "v6": 6, "7": 7}


def _device_kind() -> str:
    from traxla.runtime.backend import default_backend
    import traxla
    try:
        return traxla.devices(default_backend())[0].device_kind
    except Exception:  # noqa: BLE001  (no device at all: not a TPU)
        return default_backend()


def _tpu_generation() -> int:
    kind = _device_kind()
    words = kind.lower().replace("tpu", " ").split()
    if kind.startswith("TPU") and words:
        head = words[0].rstrip("pe").rstrip("i")
        for key, gen in _GENERATIONS.items():
            if head == key or head == key.lstrip("v"):
                return gen
        if head.startswith("7"):
            return 7
    raise ValueError(f"Unsupported TPU device kind: {kind}")


class Tiling(enum.Enum):
    COMPACT = enum.auto()
    SPARSE_CORE = enum.auto()

    @property
    def shape(self):
        return (8, 128) if self is Tiling.COMPACT else (8,)


def _infer_tiling(shape, dtype, tiling=None):
    """The tile of each dimension of an array in HBM (None where the dtype is unknown)."""
    if dtype is None:
        return (None,) * len(shape)
    dtype = np.dtype(dtype)
    packing = 8 if dtype.name == "int4" else 4 // dtype.itemsize
    tiling = Tiling.COMPACT if tiling is None else tiling
    if len(shape) == 1 and tiling is Tiling.COMPACT:
        return ((1 + int(_tpu_generation() < 4)) * packing * tiling.shape[1],)
    if len(shape) < len(tiling.shape):
        raise ValueError(f"Shape must have at least {len(tiling.shape)} dimensions: {shape=}")
    if tiling is Tiling.SPARSE_CORE:
        return (*(1,) * (len(shape) - 1), tiling.shape[0] * packing)
    factor = (1 + int(_tpu_generation() < 4)) * packing
    while factor < min(shape[-2], tiling.shape[0]):
        factor *= 2
    return (*(1,) * (len(shape) - 2), factor, tiling.shape[1])


# -- block slices --------------------------------------------------------------------------

def _align_to(x, alignment):
    return plcore.cdiv(x, alignment) * alignment


def _blocked_slice(index, size, dim, tile):
    start = size * index
    if dim % size == 0:
        return ds(start, size)
    if tile is None:
        raise ValueError("If tiling is None, block_size must divide dim_size.")
    if size % tile:
        raise ValueError(f"Block size must divide tiling: block_size={size}, tiling={tile}")
    last = index == plcore.cdiv(dim, size) - 1
    rounded = multiple_of(jnp.where(last, _align_to(dim % size % size, tile), size), tile)
    return ds(index * size, rounded)


def _bounded_slice(start, size, block, dim, tile):
    if tile is not None and block % tile:
        raise ValueError(f"Block size must divide tiling: block_size={block}, tiling={tile}")
    if tile is None:
        return ds(start, size)
    past_end = start + size > dim
    rounded = multiple_of(jnp.where(past_end, _align_to(dim - start, tile), size), tile)
    return ds(start, rounded)


def _block_slice(index, bd, dim, tile):
    kind = type(bd).__name__
    if isinstance(bd, int) or kind == "Blocked":
        return _blocked_slice(index, bd if isinstance(bd, int) else bd.block_size, dim, tile)
    if kind == "Element":
        return _bounded_slice(index, bd.block_size, bd.block_size, dim, tile)
    if kind == "BoundedSlice":
        if not isinstance(index, Slice):
            raise ValueError("Must return a ds from the index_map for a BoundedSlice"
                             " dimension.")
        return _bounded_slice(index.start, index.size, bd.block_size, dim, tile)
    if bd is None or kind in ("Squeezed", "Indirect"):
        return index
    raise ValueError(f"Unsupported block dimension type: {bd}")


def _block_sizes(spec):
    """The block's shape in the VMEM buffer (squeezed dimensions dropped)."""
    if spec.block_shape is None:
        raise ValueError("Block shape must be specified.")
    sizes = []
    for bd in spec.block_shape:
        kind = type(bd).__name__
        if isinstance(bd, int):
            sizes.append(bd)
        elif kind in ("Blocked", "Element", "BoundedSlice", "Indirect"):
            sizes.append(bd.block_size)
        elif not (bd is None or kind == "Squeezed"):
            raise ValueError(f"Unsupported block dimension type: {bd}")
    return tuple(sizes)


def _differ(xs, ys):
    """Whether two index tuples differ anywhere (traced)."""
    out = False
    for d in tree_util.tree_leaves(tree_util.tree_map(lambda x, y: x != y, xs, ys)):
        out = out | d
    return out


def _all_less(xs, ys):
    out = True
    for d in tree_util.tree_leaves(tree_util.tree_map(lambda x, y: x < y, xs, ys)):
        out = out & d
    return out


def _is_ref(x) -> bool:
    from traxla.ir.rules.refs import is_ref_aval
    from traxla.state.ref import _RefView
    return isinstance(x, _RefView) or is_ref_aval(getattr(x, "aval", None)) or \
        type(x).__name__ == "KernelRef"


@dataclasses.dataclass(frozen=True)
class _Type:
    """An array type: what ``get_dma_slice`` reads of a ref."""
    shape: tuple
    dtype: Any


def _ref_shape_dtype(ref):
    return tuple(ref.shape), np.dtype(ref.dtype)


def _ref_space(ref):
    base = getattr(ref, "ref", ref)
    space = getattr(getattr(base, "aval", None), "memory_space", None)
    return str(getattr(space, "value", space) or "any").lower()


def _trivially_windowed(spec, grid, shape) -> bool:
    """Whether the block is the whole array at every step (no pipelining needed)."""
    if spec is None or spec.block_shape is None:
        return True
    for bd, n in zip(spec.block_shape, shape):
        if bd is None or type(bd).__name__ in ("BoundedSlice", "Indirect", "Squeezed",
                                               "Element"):
            return False
        if (bd if isinstance(bd, int) else bd.block_size) != n:
            return False
    if spec.index_map is None:
        return True
    moving = {i for i, d in enumerate(grid) if not isinstance(d, int) or d != 1}
    if not moving:
        return True
    from traxla.tracer.staging import trace_to_jaxpr
    from traxla.ir.avals import ShapedArray
    sizes = tuple(d if isinstance(d, int) else 2 for d in grid)
    with plcore._grid_point(tuple(0 for _ in grid), sizes):
        closed = trace_to_jaxpr(lambda *i: tree_util.tree_leaves(spec.index_map(*i)),
                                [ShapedArray((), np.dtype(np.int32))] * len(grid))
    jaxpr = closed.jaxpr
    if any(_is_ref(c) for c in closed.consts):
        return False
    watched = {id(jaxpr.invars[i]) for i in moving}
    if any(id(v) in watched for v in jaxpr.outvars):
        return False
    return not any(id(v) in watched for e in jaxpr.eqns for v in e.invars)


class BufferType(enum.Enum):
    """What an operand of a pipeline is to its body."""
    INPUT = 1
    OUTPUT = 2
    INPUT_OUTPUT = 3
    MANUAL = 4

    @property
    def is_input(self):
        return self in (BufferType.INPUT, BufferType.INPUT_OUTPUT)

    @property
    def is_output(self):
        return self in (BufferType.OUTPUT, BufferType.INPUT_OUTPUT)


class BufferedRefBase:
    """What a pipeline asks of a buffered operand (see :class:`BufferedRef`)."""

    @property
    def spec(self):
        raise NotImplementedError()

    @property
    def buffer_type(self):
        raise NotImplementedError()

    @property
    def is_buffered(self) -> bool:
        return False

    is_input = property(lambda self: self.buffer_type.is_input)
    is_output = property(lambda self: self.buffer_type.is_output)
    is_input_output = property(lambda self: self.buffer_type == BufferType.INPUT_OUTPUT)
    is_manual = property(lambda self: self.buffer_type == BufferType.MANUAL)

    @property
    def is_trivial_windowing(self) -> bool:
        return False

    @property
    def block_shape(self):
        return self.spec.block_shape

    @property
    def has_indirect(self) -> bool:
        return self.block_shape is not None and any(
            type(bd).__name__ == "Indirect" for bd in self.block_shape)

    @property
    def compute_index(self):
        return self.spec.index_map

    def get_dma_slice(self, src_ty, grid_indices):
        """The slice of an array of type ``src_ty`` (its ``shape`` and ``dtype``) that the
        block at ``grid_indices`` covers (the last block along a dimension it does not
        divide is cut to a whole number of tiles)."""
        shape = getattr(src_ty, "shape", None)
        if shape is None:
            raise ValueError(f"Type {src_ty} does not have a shape")
        shape, dtype = tuple(shape), getattr(src_ty, "dtype", None)
        if not shape:
            return ()
        tiles = _infer_tiling(shape, dtype, getattr(self, "tiling", None))
        index = self.compute_index(*grid_indices)
        if not isinstance(index, tuple):
            index = (index,)
        if len(index) != len(self.block_shape):
            raise ValueError(f"The index map returned {len(index)} indices for a block of "
                             f"rank {len(self.block_shape)}")
        return tuple(_block_slice(i, b, n, t)
                     for i, b, n, t in zip(index, self.block_shape, shape, tiles))

    def _to_window_slice(self, dma_slice):
        return tuple(ds(0, s.size) for s, bd in zip(dma_slice, self.block_shape)
                     if not (bd is None or type(bd).__name__ == "Squeezed"))

    def bind_existing_ref(self, window_ref, indices):
        return self

    def unbind_refs(self):
        return self

    def with_spec(self, spec):
        raise NotImplementedError()


def _static(**kw):
    return dataclasses.field(metadata=dict(static=True), **kw)


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class BufferedRef(BufferedRefBase):
    """One operand of a pipeline: its block spec, its VMEM window of ``buffer_count``
    slots (or, for an operand already in VMEM, a view of it), its DMA semaphores
    (``sem_recvs`` for inputs, ``sem_sends`` for outputs) and four slot counters: the
    copies in started and waited for, the copies out started and waited for (``uint32``,
    the slot being the counter modulo ``buffer_count``)."""
    _spec: Any = _static()
    _buffer_type: BufferType = _static()
    _buffer_count: int = _static()
    _grid_rank: int | None = _static()
    window_ref: Any
    copy_in_slot: Any
    wait_in_slot: Any
    copy_out_slot: Any
    wait_out_slot: Any
    next_fetch: Any
    sem_recvs: Any
    sem_sends: Any
    tiling: Tiling | None = _static()
    is_trivial_windowing: bool = _static(default=False)
    has_allocated_buffer: bool = _static(default=False)

    def __post_init__(self):
        if self.is_buffered and self.buffer_count < 1:
            raise ValueError(f"buffer_count must be at least 1, got {self.buffer_count}")
        if self.is_output and self.is_buffered and self.buffer_count > 2:
            raise NotImplementedError("Buffer count >2 not supported for output buffered "
                                      "refs.")

    spec = property(lambda self: self._spec)
    buffer_type = property(lambda self: self._buffer_type)
    is_buffered = property(lambda self: self._buffer_count > 0)
    use_lookahead = property(lambda self: self._grid_rank is not None)

    @property
    def buffer_count(self) -> int:
        if not self.is_buffered:
            raise ValueError("buffer count is undefined")
        return self._buffer_count

    @classmethod
    def create(cls, spec, dtype_or_type, buffer_type, buffer_count, grid_rank=None,
               use_lookahead=False, source_memory_space=plcore.ANY, tiling=None,
               is_trivial_windowing=False):
        """A buffered operand for ``spec``: its VMEM window and semaphores are scratch
        types here (``pl.run_scoped`` allocates them; ``emit_pipeline`` does so)."""
        from traxla.experimental.pallas import tpu as pltpu
        dtype = getattr(dtype_or_type, "dtype", dtype_or_type)
        shape = getattr(dtype_or_type, "shape", None)
        space = spec.memory_space
        space = "vmem" if space is None else str(getattr(space, "value", space)).lower()
        if space in ("any", "default"):
            space = "vmem" if space == "default" else "hbm"
        if space not in ("smem", "vmem", "hbm"):
            raise ValueError(f"Unsupported buffer memory space: {space}")
        source = str(getattr(source_memory_space, "value", source_memory_space)).lower()
        if source == space:
            return cls(_spec=spec, _buffer_type=buffer_type, _buffer_count=0, _grid_rank=None,
                       window_ref=None, copy_in_slot=None, wait_in_slot=None,
                       copy_out_slot=None, wait_out_slot=None, next_fetch=None,
                       sem_recvs=None, sem_sends=None, tiling=None,
                       is_trivial_windowing=is_trivial_windowing, has_allocated_buffer=False)
        if use_lookahead and grid_rank is None:
            raise ValueError("grid_rank must be specified when use_lookahead is True.")
        if is_trivial_windowing:
            buffer_shape = tuple(shape)
        else:
            block = _block_sizes(spec)
            buffer_shape = ((buffer_count * block[0],)
                            if len(block) == 1 and tiling is not Tiling.SPARSE_CORE
                            else (buffer_count, *block))
        mem = {"vmem": pltpu.VMEM, "smem": pltpu.SMEM, "hbm": pltpu.HBM}[space]
        sems = lambda: pltpu.SemaphoreType.DMA((buffer_count,))  # noqa: E731
        return cls(
            _spec=spec, _buffer_type=buffer_type, _buffer_count=buffer_count,
            _grid_rank=grid_rank if use_lookahead else None,
            window_ref=mem(buffer_shape, dtype), copy_in_slot=None, wait_in_slot=None,
            copy_out_slot=None, wait_out_slot=None, next_fetch=None,
            sem_recvs=(None if buffer_type is BufferType.OUTPUT or is_trivial_windowing
                       else sems()),
            sem_sends=(None if buffer_type is BufferType.INPUT or is_trivial_windowing
                       else sems()),
            tiling=tiling, is_trivial_windowing=is_trivial_windowing,
            has_allocated_buffer=True)

    @classmethod
    def input(cls, spec, dtype_or_type, buffer_count=2, **kwargs):
        return cls.create(spec, dtype_or_type, BufferType.INPUT, buffer_count, **kwargs)

    @classmethod
    def output(cls, spec, dtype_or_type, buffer_count=2, **kwargs):
        return cls.create(spec, dtype_or_type, BufferType.OUTPUT, buffer_count, **kwargs)

    @classmethod
    def input_output(cls, spec, dtype_or_type, buffer_count=2, **kwargs):
        return cls.create(spec, dtype_or_type, BufferType.INPUT_OUTPUT, buffer_count,
                          **kwargs)

    def with_spec(self, spec):
        return dataclasses.replace(self, _spec=spec)

    def with_next_fetch(self, next_fetch=None):
        return dataclasses.replace(self, next_fetch=next_fetch)

    def with_slot_index(self, copy_in_slot=None, copy_out_slot=None, wait_in_slot=None,
                        wait_out_slot=None):
        changes = {k: v for k, v in (("copy_in_slot", copy_in_slot),
                                     ("copy_out_slot", copy_out_slot),
                                     ("wait_in_slot", wait_in_slot),
                                     ("wait_out_slot", wait_out_slot)) if v is not None}
        return dataclasses.replace(self, **changes) if changes else self

    @property
    def current_ref(self):
        """The block the body works on now (a slot of the window)."""
        if not self.is_buffered or self.is_trivial_windowing:
            return self.window_ref
        slot = self.current_copy_out_slot if self.is_output else self.current_wait_in_slot
        return self._window_ref_at(slot)

    def _slot(self, counter):
        return lax.rem(counter, jnp.uint32(self.buffer_count))

    cumulative_copy_in = property(lambda self: self.copy_in_slot)
    cumulative_copy_out = property(lambda self: self.copy_out_slot)
    cumulative_wait_in = property(lambda self: self.wait_in_slot)
    cumulative_wait_out = property(lambda self: self.wait_out_slot)
    current_copy_in_slot = property(lambda self: self._slot(self.copy_in_slot))
    current_copy_out_slot = property(lambda self: self._slot(self.copy_out_slot))
    current_wait_in_slot = property(lambda self: self._slot(self.wait_in_slot))
    current_wait_out_slot = property(lambda self: self._slot(self.wait_out_slot))

    @property
    def next_fetch_indices(self):
        if not self.use_lookahead:
            raise ValueError("Can only get fetch indices if using lookahead.")
        return self.next_fetch

    def bind_existing_ref(self, window_ref, indices):
        """An operand already in the body's memory space: the body sees a view of it."""
        if not self.is_buffered and not self.has_allocated_buffer:
            if self.is_trivial_windowing:
                return dataclasses.replace(self, window_ref=window_ref)
            return dataclasses.replace(self, window_ref=window_ref.at[
                self.compute_slice(indices)])
        return self

    def unbind_refs(self):
        if not self.is_buffered and not self.has_allocated_buffer:
            return dataclasses.replace(self, window_ref=None)
        return self

    def compute_slice(self, grid_indices):
        indices = self.compute_index(*grid_indices)
        if not isinstance(indices, tuple):
            indices = (indices,)
        out = []
        for bd, idx in zip(self.block_shape, indices, strict=True):
            kind = type(bd).__name__
            if bd is None or kind == "Squeezed":
                out.append(idx)
            elif kind in ("Element", "BoundedSlice"):
                raise ValueError(f"{kind} block dimensions are not supported.")
            elif kind == "Blocked" or isinstance(bd, int):
                size = bd if isinstance(bd, int) else bd.block_size
                out.append(ds(idx * size, size))
            else:
                raise ValueError(f"Unsupported block dimension type: {type(bd)}")
        return tuple(out)

    def initialize_slots(self):
        zero = lambda: jnp.uint32(0)  # noqa: E731
        return dataclasses.replace(
            self,
            copy_in_slot=zero() if self.buffer_type.is_input else None,
            wait_in_slot=zero() if self.buffer_type.is_input else None,
            copy_out_slot=zero() if self.buffer_type.is_output else None,
            wait_out_slot=zero() if self.buffer_type.is_output else None,
            next_fetch=(tuple(jnp.int32(0) for _ in range(self._grid_rank))
                        if self._grid_rank is not None else None))

    def _advance(self, name, predicate):
        value = getattr(self, name)
        return self.with_slot_index(**{name: lax.select(predicate, value + 1, value)})

    def advance_copy_in_slot(self, predicate=True):
        if not self.is_buffered or not self.is_input:
            return self
        return self._advance("copy_in_slot", predicate)

    def advance_wait_in_slot(self, predicate=True):
        if not self.is_buffered or not self.is_input:
            return self
        return self._advance("wait_in_slot", predicate)

    def advance_copy_out_slot(self, predicate=True):
        if not self.is_buffered or not self.is_output:
            return self
        return self._advance("copy_out_slot", predicate)

    def advance_wait_out_slot(self, predicate=True):
        if not self.is_buffered or not self.is_output:
            return self
        return self._advance("wait_out_slot", predicate)

    def _window_ref_at(self, slot, window_slice=None):
        if len(self.window_ref.shape) > 1:
            return self.window_ref.at[(slot, *(window_slice or ()))]
        n = self.window_ref.shape[0] // self.buffer_count  # 1-D: the slots end to end
        if window_slice is None:
            return self.window_ref.at[ds(slot * n, n)]
        (w,) = window_slice
        return self.window_ref.at[ds(slot * n + w.start, w.size)]

    def _dma(self, hbm_ref, grid_indices, slot):
        """(the HBM side's view, the window's view) of the block at ``grid_indices``."""
        shape, dtype = _ref_shape_dtype(hbm_ref)
        hbm_slice = self.get_dma_slice(_Type(shape, dtype), grid_indices)
        return hbm_ref.at[hbm_slice], self._window_ref_at(slot, self._to_window_slice(hbm_slice))

    def copy_in(self, src_ref, grid_indices):
        """Starts the DMA of the block at ``grid_indices`` into the copy-in slot."""
        from traxla.experimental.pallas.tpu_primitives import make_async_copy
        if not self.is_buffered:
            return
        slot = self.current_copy_in_slot
        src, dst = self._dma(src_ref, grid_indices, slot)
        make_async_copy(src, dst, self.sem_recvs.at[slot]).start()

    def copy_out(self, dst_ref, grid_indices):
        """Starts the DMA of the copy-out slot to the block at ``grid_indices``."""
        from traxla.experimental.pallas.tpu_primitives import make_async_copy, sync_copy
        if not self.is_buffered:
            return
        slot = self.current_copy_out_slot
        dst, src = self._dma(dst_ref, grid_indices, slot)
        if self.buffer_count == 1:
            sync_copy(src, dst)
        else:
            make_async_copy(src, dst, self.sem_sends.at[slot]).start()

    def wait_in(self, src_ref, grid_indices):
        from traxla.experimental.pallas.tpu_primitives import make_async_copy
        if not self.is_buffered:
            return
        shape, dtype = _ref_shape_dtype(src_ref)
        hbm_slice = self.get_dma_slice(_Type(shape, dtype), grid_indices)
        slot = self.current_wait_in_slot
        make_async_copy(src_ref.at[hbm_slice],
                        self._window_ref_at(slot, self._to_window_slice(hbm_slice)),
                        self.sem_recvs.at[slot]).wait()

    def wait_out(self, dst_ref, grid_indices):
        from traxla.experimental.pallas.tpu_primitives import make_async_copy
        if not self.is_buffered:
            return
        slot = self.current_wait_out_slot
        shape, dtype = _ref_shape_dtype(dst_ref)
        hbm_slice = self.get_dma_slice(_Type(shape, dtype), grid_indices)
        if self.buffer_count > 1:  # (a single buffer was copied out synchronously)
            make_async_copy(self._window_ref_at(slot, self._to_window_slice(hbm_slice)),
                            dst_ref.at[hbm_slice], self.sem_sends.at[slot]).wait()

