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

As in JAX, the DMA slices depend on the TPU's memory tiling, read from the default device
(or the abstract mesh's device): where that is not a TPU (a CPU), building the pipeline
raises ``ValueError: Unsupported TPU device kind: cpu``, in interpret mode too."""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import functools
import math
from typing import Any

import numpy as np

from traxla import lax, tree_util
from traxla.api.named_scopes import named_scope
from traxla.experimental.pallas import core as plcore
from traxla.experimental.pallas import surface
from traxla.experimental.pallas.helpers import multiple_of
from traxla.experimental.pallas.kernel_refs import Slice, ds
import traxla.numpy as jnp

__all__ = ["BufferType", "BufferedRef", "BufferedRefBase", "emit_pipeline",
           "emit_pipeline_with_allocations", "get_pipeline_schedule"]


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

    def get_dma_slice(self, shape, dtype, grid_indices):
        """The slice of the array (``shape``, ``dtype``) that the block at ``grid_indices``
        covers (the last block along a dimension it does not divide is cut to a whole
        number of tiles)."""
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

    def _window_slice(self, dma_slice):
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


@functools.partial(tree_util.register_dataclass)
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
               use_lookahead=False, source_memory_space="any", tiling=None,
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
        hbm_slice = self.get_dma_slice(shape, dtype, grid_indices)
        return hbm_ref.at[hbm_slice], self._window_ref_at(slot, self._window_slice(hbm_slice))

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
        hbm_slice = self.get_dma_slice(shape, dtype, grid_indices)
        slot = self.current_wait_in_slot
        make_async_copy(src_ref.at[hbm_slice],
                        self._window_ref_at(slot, self._window_slice(hbm_slice)),
                        self.sem_recvs.at[slot]).wait()

    def wait_out(self, dst_ref, grid_indices):
        from traxla.experimental.pallas.tpu_primitives import make_async_copy
        if not self.is_buffered:
            return
        slot = self.current_wait_out_slot
        shape, dtype = _ref_shape_dtype(dst_ref)
        hbm_slice = self.get_dma_slice(shape, dtype, grid_indices)
        if self.buffer_count > 1:  # (a single buffer was copied out synchronously)
            make_async_copy(self._window_ref_at(slot, self._window_slice(hbm_slice)),
                            dst_ref.at[hbm_slice], self.sem_sends.at[slot]).wait()


def _as_u32(x):
    return jnp.uint32(x) if isinstance(x, bool) else x.astype(jnp.uint32)


def fetch_with_lookahead(bref, src_ref, grid, grid_offsets, predicate=True,
                         max_num_fetches=None, update_slots=True):
    """Starts the DMAs of the next blocks that differ from the one before, as far as the
    free slots allow (``pl.Buffered(n, use_lookahead=True)``)."""
    def offset(x):
        return tuple(i + j for i, j in zip(x, grid_offsets, strict=True))

    limit = bref.cumulative_wait_in + bref.buffer_count
    if max_num_fetches is not None:
        once = bref.cumulative_copy_in + max_num_fetches
        limit = lax.select(limit < once, limit, once)

    def cond(carry):
        _, nxt, copied = carry
        within, in_grid = copied < limit, _all_less(nxt, grid)
        return predicate & within & in_grid

    def body(carry):
        cur, nxt, copied = carry
        cur_o, nxt_o = offset(cur), offset(nxt)
        changes = _differ(bref.compute_index(*cur_o), bref.compute_index(*nxt_o))
        at = bref.with_slot_index(copy_in_slot=copied)

        @plcore.when(changes)
        def _():
            at.copy_in(src_ref, nxt_o)
        copied = copied + _as_u32(changes)
        return nxt, _next_index(nxt, grid, allow_overflow=True), copied

    cur = bref.next_fetch_indices
    final, _, copied = lax.while_loop(
        cond, body, (cur, _next_index(cur, grid, allow_overflow=True),
                     bref.cumulative_copy_in))
    bref = bref.with_next_fetch(final)
    if update_slots:
        bref = bref.with_slot_index(copy_in_slot=copied)
    return bref, copied


def _is_bref(x):
    return isinstance(x, BufferedRefBase)


def _map_brefs(f, *trees):
    return tree_util.tree_map(f, *trees, is_leaf=_is_bref)


def _map_if(which, f, *trees):
    return _map_brefs(lambda b, *a: f(b, *a) if getattr(b, which) else b, *trees)


def _filter_indices(indices, grid):
    return tuple(0 if isinstance(g, int) and g == 1 else i
                 for i, g in zip(indices, grid, strict=True))


def _next_index(indices, grid, allow_overflow=False):
    """The grid point after ``indices`` (row-major); with ``allow_overflow`` the first
    axis counts on past its size."""
    out, carry = [], True
    for pos, (i, g) in enumerate(reversed(list(zip(indices, grid, strict=True)))):
        inc = lax.select(carry, i + 1, i)
        carry = False if allow_overflow and pos == len(grid) - 1 else inc == g
        out.append(lax.select(carry, 0, inc))
    out = tuple(reversed(out))
    return out if allow_overflow else _filter_indices(out, grid)


def _prev_index(indices, grid):
    out, borrow = [], True
    for i, g in reversed(list(zip(indices, grid, strict=True))):
        dec = lax.select(borrow, i - 1, i)
        borrow = dec == -1
        out.append(lax.select(borrow, g - 1, dec))
    return _filter_indices(tuple(reversed(out)), grid)


class Scheduler:
    """When each operand's DMAs start and are waited for, at one step of the pipeline."""

    def __init__(self, step, indices, grid, grid_offsets, num_stages, trace_scopes=True,
                 _explicit_indices=False):
        self.step, self.grid, self.grid_offsets = step, grid, grid_offsets
        self.num_stages, self.trace_scopes = num_stages, trace_scopes
        self._explicit_indices = _explicit_indices
        self.num_steps = math.prod(grid)
        self.first_step = step == 0
        self.last_step = step == self.num_steps - 1
        add = self.add_offset = lambda x: tuple(  # noqa: E731
            i + j for i, j in zip(x, grid_offsets, strict=True))
        self.indices = add(indices)
        self.prev_indices = add(_prev_index(indices, grid))
        nxt = _next_index(indices, grid)
        self.next_indices = add(nxt)
        # fetch_indices[k]: the grid point k steps ahead
        self.fetch_indices = [self.indices, self.next_indices]
        for _ in range(num_stages - 1):
            nxt = _next_index(nxt, grid)
            self.fetch_indices.append(add(nxt))

    @contextlib.contextmanager
    def _named_scope(self, name):
        if self.trace_scopes:
            with named_scope(name):
                yield
        else:
            yield

    def grid_env(self):
        if self._explicit_indices:
            return contextlib.nullcontext()
        return plcore._grid_point(self.indices, tuple(
            np.int32(g) if isinstance(g, int) else None for g in self.grid))

    def out_of_fetch(self, bref):
        if not bref.is_buffered:
            return jnp.asarray(False)
        return self.step >= (self.num_steps - bref.buffer_count + 1)

    def _moves(self, bref, a, b):
        if not bref.is_buffered or bref.is_trivial_windowing:
            return False
        if bref.has_indirect:
            return True
        return _differ(bref.compute_index(*a), bref.compute_index(*b))

    def has_changed(self, bref):
        return self._moves(bref, self.indices, self.prev_indices)

    def will_change_current(self, bref):
        return self._moves(bref, self.indices, self.next_indices)

    def will_change_fetch(self, bref):
        if not bref.is_buffered or bref.is_trivial_windowing:
            return False
        if bref.has_indirect:
            return True
        if bref.buffer_count < 2:
            return self.has_changed(bref)
        return _differ(bref.compute_index(*self.fetch_indices[bref.buffer_count - 2]),
                       bref.compute_index(*self.fetch_indices[bref.buffer_count - 1]))

    def alias_local_refs(self, bref, ref):
        return bref.bind_existing_ref(ref, self.indices)

    def unalias_local_refs(self, bref):
        return bref.unbind_refs()

    # -- the schedule ------------------------------------------------------------------

    def initialize_step(self, bref, src_ref, step=0):
        with self._named_scope(f"ep_initialize_{step}"):
            if not bref.is_input or not bref.is_buffered or bref.is_trivial_windowing:
                return bref
            if step + 1 >= bref.buffer_count:
                return bref
            if bref.use_lookahead:
                if step == 0:
                    @plcore.when(self.first_step)
                    def _():
                        bref.copy_in(src_ref, self.add_offset(bref.next_fetch_indices))
                    return bref.advance_copy_in_slot(self.first_step)
                bref, _ = fetch_with_lookahead(bref, src_ref, self.grid, self.grid_offsets,
                                               predicate=self.first_step, max_num_fetches=1)
                return bref
            fetch = self.fetch_indices[step]
            if step == 0:
                predicate = self.first_step
            else:
                prev = self.fetch_indices[step - 1]
                predicate = self.first_step & _differ(bref.compute_index(*fetch),
                                                      bref.compute_index(*prev))

            @plcore.when(predicate)
            def _():
                bref.copy_in(src_ref, fetch)
            return bref.advance_copy_in_slot(predicate)

    def wait_in(self, bref, src_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.has_changed(bref) | self.first_step

        @plcore.when(pred)
        @self._named_scope("ep_wait_in")
        def _():
            if bref.is_input:
                bref.wait_in(src_ref, self.indices)
        return bref

    def copy_in(self, bref, src_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.will_change_fetch(bref) & ~self.out_of_fetch(bref)
        if bref.is_buffered and bref.buffer_count < 2:  # (no prologue: fetch on step 0)
            pred = pred | self.first_step
        if not bref.is_input:
            return bref
        if bref.use_lookahead:
            bref, _ = fetch_with_lookahead(bref, src_ref, self.grid, self.grid_offsets,
                                           predicate=True)
            return bref

        @plcore.when(pred)
        @self._named_scope("ep_copy_in")
        def _():
            if bref.is_input and bref.is_buffered:
                bref.copy_in(src_ref, self.fetch_indices[bref.buffer_count - 1])
        return bref.advance_copy_in_slot(pred & bref.is_input)

    def wait_out(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.has_changed(bref) & ~self.first_step

        @plcore.when(pred)
        @self._named_scope("ep_wait_out")
        def _():
            if bref.is_output:  # (the copy out of the step before)
                bref.wait_out(dst_ref, self.prev_indices)
        return bref.advance_wait_out_slot(pred & bref.is_output)

    def copy_out(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return bref
        pred = self.will_change_current(bref) | self.last_step

        @plcore.when(pred)
        @self._named_scope("ep_copy_out")
        def _():
            if bref.is_output:
                bref.copy_out(dst_ref, self.indices)
        return bref.advance_copy_out_slot(pred & bref.is_output)

    def finalize(self, bref, dst_ref):
        if bref.is_trivial_windowing:
            return

        @plcore.when(self.last_step)
        @self._named_scope("ep_finalize")
        def _():
            if bref.is_output:
                bref.wait_out(dst_ref, self.indices)

    def advance_slots(self, bref):
        if bref.is_input:
            bref = bref.advance_wait_in_slot(self.will_change_current(bref) | self.last_step)
        return bref


def _normalize_specs(specs):
    if not isinstance(specs, (list, tuple)):
        specs = (specs,)
    return tuple(specs)


def _make_pipeline_allocations(*refs, in_specs=(), out_specs=(), tiling=None, grid=()):
    """The :class:`BufferedRef` of each operand (its buffers still scratch types: pass
    them to ``pl.run_scoped``, or as the kernel's scratch shapes, to reuse them across
    several runs of a pipeline)."""
    nin = len(in_specs)
    in_specs, out_specs = _normalize_specs(in_specs), _normalize_specs(out_specs)
    in_refs, out_refs = refs[:nin], refs[nin:]

    def make(spec, ref, kind):
        shape, dtype = _ref_shape_dtype(ref)
        count, lookahead = 2, False
        buffered = spec.pipeline_mode is not None
        if buffered:
            count = spec.pipeline_mode.buffer_count
            lookahead = spec.pipeline_mode.use_lookahead
        if kind is BufferType.OUTPUT and lookahead:
            raise ValueError("Output buffering does not support lookahead.")
        trivial = _trivially_windowed(spec, grid, shape)
        if not buffered and trivial:
            count = 1
        aval = _Aval(shape, dtype)
        extra = ({"grid_rank": len(grid), "use_lookahead": lookahead}
                 if kind is BufferType.INPUT else {})
        return BufferedRef.create(spec, aval, kind, count, source_memory_space=_ref_space(ref),
                                  tiling=tiling, is_trivial_windowing=trivial, **extra)

    brefs_in = tree_util.tree_map(lambda s, r: make(s, r, BufferType.INPUT), in_specs,
                                  tuple(in_refs), is_leaf=lambda s: s is None)
    brefs_out = tree_util.tree_map(lambda s, r: make(s, r, BufferType.OUTPUT), out_specs,
                                   tuple(out_refs), is_leaf=lambda s: s is None)
    return (*brefs_in, *brefs_out)


@dataclasses.dataclass(frozen=True)
class _Aval:
    shape: tuple
    dtype: Any


def _partition_grid(grid, core_axis, dimension_semantics):
    """This core's part of the grid and its offsets (``core_axis``: the grid axis, or mesh
    axis name, whose index is the core's)."""
    from traxla.experimental.pallas.tpu import ARBITRARY, PARALLEL
    if core_axis is None:
        return grid, (0,) * len(grid)
    if isinstance(core_axis, int):
        cores, core = plcore.num_programs(core_axis), plcore.program_id(core_axis)
    else:
        cores, core = lax.axis_size(core_axis), lax.axis_index(core_axis)
    if not isinstance(cores, (int, np.integer)):
        raise NotImplementedError(
            f"Cannot partition grid over dynamic number of cores: core_axis={core_axis!r}")
    cores = int(cores)
    if cores == 1:
        return grid, (0,) * len(grid)
    if dimension_semantics is None:
        dimension_semantics = (ARBITRARY,) * len(grid)
    if len(dimension_semantics) != len(grid):
        raise ValueError("dimension_semantics must be the same length as grid.")
    parallel = {i for i, d in enumerate(dimension_semantics)
                if d == PARALLEL or str(getattr(d, "value", d)) == "parallel"}
    if not parallel:
        raise NotImplementedError("Cannot partition over cores without parallel grid "
                                  f"dimensions: dimension_semantics={dimension_semantics}")

    def replace(t, i, v):
        return tuple(v if k == i else x for k, x in enumerate(t))

    divisible = [i for i in sorted(parallel) if isinstance(grid[i], int)
                 and grid[i] % cores == 0]
    if divisible:
        i = divisible[0]
        part = grid[i] // cores
        return replace(grid, i, part), replace((0,) * len(grid), i, core * part)
    dynamic = [i for i in sorted(parallel) if not isinstance(grid[i], int)]
    static = [i for i in sorted(parallel) if isinstance(grid[i], int)]
    if len(dynamic) > 1:
        raise NotImplementedError(f"Cannot partition over multiple dynamic parallel "
                                  f"dimensions: grid={grid}")
    if dynamic and not static:
        i = dynamic[0]
    else:
        largest = max(grid[k] for k in static)
        i = next(k for k in static if grid[k] == largest)
    base, rem = divmod(grid[i], cores)
    iters = jnp.where(core < rem, base + 1, base)
    offset = jnp.where(core < rem, core * iters, core * base + rem)
    return replace(grid, i, iters), replace((0,) * len(grid), i, offset)


def sync_copy(src, dst, indices):
    """Copies between an HBM ref and the block of a :class:`BufferedRef` (one of ``src``,
    ``dst``) at ``indices``, and waits."""
    from traxla.experimental.pallas.tpu_primitives import sync_copy as _sync
    if isinstance(src, BufferedRef):
        if isinstance(dst, BufferedRef):
            raise ValueError("Only one of src or dst can be a BufferedRef.")
        bref, hbm, inward = src, dst, False
    else:
        if not isinstance(dst, BufferedRef):
            raise ValueError("One of src or dst must be a BufferedRef.")
        bref, hbm, inward = dst, src, True
    window = bref.current_ref
    if not bref.is_trivial_windowing:
        shape, dtype = _ref_shape_dtype(hbm)
        hbm_slice = bref.get_dma_slice(shape, dtype, indices)
        hbm, window = hbm.at[hbm_slice], window.at[bref._window_slice(hbm_slice)]
    if inward:
        _sync(hbm, window)
    else:
        _sync(window, hbm)


def _loop_state(tree):
    """Splits a pytree of BufferedRefs into its refs (kept out of the loop's carry, as
    JAX's loops hoist refs into constants) and the values the loop carries."""
    leaves, treedef = tree_util.tree_flatten(tree)
    is_ref = [_is_ref(x) for x in leaves]
    refs = [x for x, r in zip(leaves, is_ref) if r]
    values = [x for x, r in zip(leaves, is_ref) if not r]

    def rebuild(vals):
        it_r, it_v = iter(refs), iter(vals)
        return tree_util.tree_unflatten(treedef, [next(it_r) if r else next(it_v)
                                                  for r in is_ref])
    return values, rebuild


def _run_body(body, scheduler, brefs, scratches, explicit):
    current = _map_brefs(lambda b: b.current_ref, brefs)
    with scheduler._named_scope("ep_run_kernel"):
        if explicit:
            body(scheduler.indices, *current, *scratches)
        else:
            body(*current, *scratches)


def emit_pipeline(body, *, grid, in_specs=(), out_specs=(), tiling=None, core_axis=None,
                  core_axis_name=None, dimension_semantics=None, trace_scopes=True,
                  no_pipelining=False, _explicit_indices=False):
    """A function of refs (``pipeline(*in_refs, *out_refs)``, inside a Pallas TPU kernel)
    that runs ``body`` on each block of ``grid``, the blocks of ``in_specs``/``out_specs``
    double-buffered in VMEM while DMAs move the next ones (see the module docstring).
    ``core_axis``/``core_axis_name`` split the grid's first ``PARALLEL`` dimension among
    cores; ``no_pipelining`` makes every copy synchronous."""
    if any(g <= 0 for g in grid if isinstance(g, int)):
        raise ValueError(f"All elements in the grid must be strictly positive, but got "
                         f"grid={tuple(grid)}")
    if any(not (isinstance(d, int) or getattr(d, "shape", None) == ()) for d in grid):
        raise ValueError("Grid must consist of Python integers and JAX Arrays: "
                         f"{tuple(type(d) for d in grid)}")
    if core_axis is not None and core_axis_name is not None:
        raise ValueError("core_axis and core_axis_name cannot both be provided.")
    grid = tuple(grid)
    in_specs, out_specs = _normalize_specs(in_specs), _normalize_specs(out_specs)
    counts = [s.pipeline_mode.buffer_count
              for s in tree_util.tree_leaves((in_specs, out_specs),
                                             is_leaf=lambda s: hasattr(s, "block_shape"))
              if getattr(s, "pipeline_mode", None) is not None]
    num_stages = max((2, *counts))
    pgrid, offsets = _partition_grid(
        grid, core_axis_name if core_axis is None else core_axis, dimension_semantics)

    def pipeline(*refs, scratches=None, allocations=None, body_prologue=None):
        scratches = () if scratches is None else scratches
        if allocations is None:  # the buffers: allocated around this pipeline
            from traxla.experimental.pallas.kernel_refs import run_scoped
            return run_scoped(
                lambda allocs: pipeline(*refs, scratches=scratches, allocations=allocs),
                _make_pipeline_allocations(*refs, in_specs=in_specs, out_specs=out_specs,
                                           grid=pgrid, tiling=tiling))
        allocations = tuple(allocations) if isinstance(allocations, list) else allocations
        return _run_pipeline(body, refs, scratches, allocations, body_prologue, pgrid,
                             offsets, num_stages, trace_scopes, no_pipelining,
                             _explicit_indices)

    return pipeline


def _run_pipeline(body, refs, scratches, allocations, body_prologue, grid, offsets,
                  num_stages, trace_scopes, no_pipelining, explicit):
    num_steps = math.prod(grid)

    def scheduler_at(step, indices):
        return Scheduler(step, indices, grid, grid_offsets=offsets, num_stages=num_stages,
                         trace_scopes=trace_scopes, _explicit_indices=explicit)

    def step_fn(step, carry, rebuild, synchronous):
        values, indices = carry
        brefs = rebuild(values)
        indices = _filter_indices(indices, grid)
        sched = scheduler_at(step, indices)
        with sched.grid_env():
            brefs = _map_brefs(sched.alias_local_refs, brefs, refs)
            if synchronous:
                _map_if("is_input", lambda b, r: sync_copy(r, b, indices), brefs, refs)
            else:
                brefs = _map_brefs(sched.copy_in, brefs, refs)
                brefs = _map_brefs(sched.wait_in, brefs, refs)
            if body_prologue is not None:
                body_prologue()
            _run_body(body, sched, brefs, scratches, explicit)
            if synchronous:
                _map_if("is_output", lambda b, r: sync_copy(b, r, indices), brefs, refs)
            else:
                brefs = _map_brefs(sched.copy_out, brefs, refs)
                brefs = _map_brefs(sched.wait_out, brefs, refs)
                brefs = _map_brefs(sched.advance_slots, brefs)
            if not synchronous:
                brefs = _map_brefs(sched.unalias_local_refs, brefs)
        if synchronous:
            brefs = _map_brefs(sched.unalias_local_refs, brefs)
        return _loop_state(brefs)[0], _next_index(indices, grid)

    def loop(brefs, synchronous):
        start = (0,) * len(grid)
        values, rebuild = _loop_state(brefs)
        values, last = lax.fori_loop(
            0, num_steps, lambda s, c: step_fn(s, c, rebuild, synchronous), (values, start))
        return rebuild(values), last

    if no_pipelining:
        loop(_map_brefs(lambda b: b.initialize_slots(), allocations), True)
        return

    @plcore.when(num_steps > 0)
    def _():
        start = (0,) * len(grid)
        sched = scheduler_at(0, start)
        brefs = _map_brefs(lambda b: b.initialize_slots(), allocations)

        def copy_whole_in(bref, ref):
            if bref.is_trivial_windowing and bref.window_ref is not None:
                sync_copy(ref, bref, start)
        _map_if("is_input", copy_whole_in, brefs, refs)
        with sched.grid_env():  # the first num_stages - 1 blocks of each input, in order
            for k in range(sched.num_stages - 1):
                brefs = _map_brefs(functools.partial(sched.initialize_step, step=k),
                                   brefs, refs)
        brefs, after = loop(brefs, False)
        sched = scheduler_at(num_steps - 1, _prev_index(after, grid))
        with sched.grid_env():
            _map_brefs(sched.finalize, brefs, refs)

        def copy_whole_out(bref, ref):
            if bref.is_trivial_windowing and bref.window_ref is not None:
                sync_copy(bref, ref, start)
        _map_if("is_output", copy_whole_out, brefs, refs)


def emit_pipeline_with_allocations(body, *, grid, in_specs=(), out_specs=()):
    """``(pipeline, make_allocations)``: the pipeline, and a function of the refs giving
    its BufferedRefs (scratch types), to allocate once at the top of a kernel and pass as
    ``pipeline(*refs, allocations=...)`` to every run of the pipeline."""
    make_allocations = functools.partial(_make_pipeline_allocations, in_specs=in_specs,
                                         out_specs=out_specs, grid=tuple(grid))
    return emit_pipeline(body, grid=grid, in_specs=in_specs,
                         out_specs=out_specs), make_allocations
