"""The refs a Pallas kernel sees in interpret mode, and the scratch buffers it asks for.

A :class:`KernelRef` is a view of a traxla array ref (``traxla.state.ref``: a ``Ref``
eagerly, a ref tracer while staged): per dimension of the underlying ref, a slice (a start,
static or traced, a static size and stride) or a single index. Kernels index it as JAX's
refs are indexed, with ints, ``slice``, ``pl.ds``/``pl.Slice`` (a traced start) and
``...``; ``ref.at[idx]`` narrows the view (the ``src``/``dst`` of a DMA). A read is a read
of the whole underlying ref followed by a (dynamic) slice; a write is a
``dynamic_update_slice`` of the whole value written back, so ``jit``, ``grad`` and ``vmap``
see ordinary array operations.

Semaphores (``pltpu.SemaphoreType.DMA``/``REGULAR``, ``pl.semaphore``) are ``int32`` refs
holding their count: interpret mode runs one kernel invocation at a time, in order, so a
DMA completes when it starts and a wait never blocks.
"""
from __future__ import annotations

import enum

import numpy as np

from traxla import lax, tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.state.ref import new_ref
from traxla.tracer import Tracer
import traxla.numpy as jnp

__all__ = ["KernelRef", "Slice", "ds", "dslice", "scratch_ref", "run_scoped", "is_semaphore"]


from traxla.state.indexing import Slice, ds, dslice  # noqa: E402,F401  (also jax.ds)


def _static_int(x):
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, Tracer):
        return None
    try:  # a concrete Array or NumPy scalar
        return int(np.asarray(x))
    except Exception:
        return None


def _normalize(idx, shape):
    """Per dimension of ``shape``: ``("slice", start, size, stride)`` or ``("int", i)``."""
    if idx is None or idx is Ellipsis or (type(idx) is tuple and not idx):
        return [("slice", 0, n, 1) for n in shape]
    if type(idx) is not tuple:
        idx = (idx,)
    if sum(i is Ellipsis for i in idx) > 1:
        raise IndexError("Only one ellipsis is supported.")
    if any(i is Ellipsis for i in idx):
        pos = next(k for k, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:pos] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[pos + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"Too many indices for a ref of shape {tuple(shape)}: {idx}")
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    out = []
    for i, n in zip(idx, shape):
        if isinstance(i, slice):
            s = Slice.from_slice(i, n)
            out.append(("slice", s.start, s.size, s.stride))
        elif isinstance(i, Slice):
            size, start = _static_int(i.size), _static_int(i.start)
            if size is None:  # (a DMA's view: the traced size kept, its bound the shape's)
                out.append(("slice", i.start if start is None else start,
                            n if start is None else n - start, i.stride, i.size))
                continue
            out.append(("slice", i.start if start is None else start, size, i.stride))
        elif i is None or isinstance(i, (bool, np.bool_)):
            raise TypeError(f"A ref is indexed by integers, slices and pl.ds; got {i!r}")
        else:
            if np.ndim(i) != 0:
                raise NotImplementedError("pallas interpret mode: indexing a kernel ref with "
                                          "an integer array (a gather)")
            dtype = getattr(i, "dtype", None)
            if dtype is not None and not np.issubdtype(dtype, np.integer):
                raise TypeError(f"A ref is indexed by integers; got an index of dtype {dtype}")
            static = _static_int(i)
            if static is not None and static < 0:
                static += n
            out.append(("int", i if static is None else static))
    return out


def _compose(view, entries):
    """The view of the underlying ref that ``entries`` (one per dimension of ``view``'s
    shape) select."""
    entries, out = iter(entries), []
    for v in view:
        if v[0] == "int":
            out.append(v)
            continue
        _, start, _, stride = v[:4]
        e = next(entries)
        if len(v) == 5:  # (a view of traced size: only the whole of it)
            if not _whole_entry(e, v):
                raise NotImplementedError(traced_size_error)
            out.append(v)
        elif e[0] == "int":
            out.append(("int", start + e[1] * stride))
        else:
            out.append(("slice", start + e[1] * stride, e[2], stride * e[3], *e[4:]))
    return out


traced_size_error = ("pallas interpret mode: reading, writing or indexing further a `pl.ds` "
                     "slice of a ref with a traced size (only a DMA takes one)")


def _whole_entry(e, v):
    return e[0] == "slice" and len(e) == 4 and e[1] == 0 and e[2] == v[2] and e[3] == 1


def _index32(x):
    return x if isinstance(x, int) else jnp.asarray(x).astype(np.int32)


class _At:
    def __init__(self, ref):
        self._ref = ref

    def __getitem__(self, idx):
        ref = self._ref
        return KernelRef(ref.base, _compose(ref.view, _normalize(idx, ref.shape)))


class KernelRef:
    """A kernel's view of an array ref (see the module docstring)."""

    def __init__(self, base, view=None):
        self.base = base
        aval = base.aval
        self.dtype = aval.dtype
        self.view = list(view) if view is not None else [("slice", 0, n, 1)
                                                         for n in aval.shape]
        self.shape = tuple(v[2] for v in self.view if v[0] == "slice")

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @property
    def at(self):
        return _At(self)

    def _window(self, view):
        starts = [_index32(v[1]) for v in view]
        sizes = [1 if v[0] == "int" else (v[2] - 1) * v[3] + 1 for v in view]
        return starts, sizes

    def _read(self, view):
        if any(len(v) == 5 for v in view):
            raise NotImplementedError(traced_size_error)
        full = self.base[...]
        if all(v[0] == "slice" and isinstance(v[1], int) and v[1] == 0 and v[2] == n
               and v[3] == 1 for v, n in zip(view, full.shape)):
            return full
        starts, sizes = self._window(view)
        if all(isinstance(s, int) for s in starts):
            block = lax.slice(full, starts, [s + n for s, n in zip(starts, sizes)])
        else:
            block = lax.dynamic_slice(full, starts, sizes)
        strides = [1 if v[0] == "int" else v[3] for v in view]
        if any(s != 1 for s in strides):
            block = lax.slice(block, [0] * block.ndim, block.shape, strides)
        squeeze = tuple(k for k, v in enumerate(view) if v[0] == "int")
        return lax.squeeze(block, squeeze) if squeeze else block

    def _write(self, view, value):
        if any(len(v) == 5 for v in view):
            raise NotImplementedError(traced_size_error)
        shape = tuple(v[2] for v in view if v[0] == "slice")
        value = jnp.broadcast_to(jnp.asarray(value).astype(self.dtype), shape)
        if all(v[0] == "slice" and isinstance(v[1], int) and v[1] == 0 and v[3] == 1
               and v[2] == n for v, n in zip(view, self.base.aval.shape)):
            self.base[...] = value
            return
        if any(v[0] == "slice" and v[3] != 1 for v in view):
            raise NotImplementedError("pallas interpret mode: a strided store into a ref")
        starts, sizes = self._window(view)
        full = self.base[...]
        update = value.reshape(sizes)
        self.base[...] = lax.dynamic_update_slice(full, update, starts)

    def __getitem__(self, idx):
        return self._read(_compose(self.view, _normalize(idx, self.shape)))

    def __setitem__(self, idx, value):
        self._write(_compose(self.view, _normalize(idx, self.shape)), value)

    def get(self, idx=...):
        return self[idx]

    def set(self, value, idx=...):
        self[idx] = value

    def bitcast(self, dtype):
        """This ref's bits seen as ``dtype`` (the second minor dimension packed or unpacked
        by the ratio of the bit widths, as on a TPU)."""
        from traxla.experimental.pallas.tpu_primitives import bitcast as value_bitcast
        dtype, own = np.dtype(dtype), self.dtype
        shape = tuple(value_bitcast(jnp.zeros(self.shape, own), dtype).shape) if \
            dtype.itemsize != own.itemsize else self.shape
        return KernelRef(_Transformed(self, shape, dtype, lambda v: value_bitcast(v, dtype),
                                      lambda v: value_bitcast(v, own)))

    def reshape(self, *shape):
        """This ref seen with another shape (one dimension may be -1)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(d) for d in shape)
        if shape.count(-1) > 1:
            raise ValueError(f"At most one dimension can be -1, but got {shape}")
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1]))
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        if int(np.prod(shape)) != self.size:
            raise ValueError(f"cannot reshape shape {self.shape} into shape {shape}")
        own = self.shape
        return KernelRef(_Transformed(self, shape, self.dtype, lambda v: v.reshape(shape),
                                      lambda v: v.reshape(own)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        return f"KernelRef<{self.dtype.name}{list(self.shape)}>"


class _Transformed:
    """A kernel ref seen through a reshape or a bitcast: what a :class:`KernelRef` views
    (``[...]`` reads and writes the whole of it)."""

    def __init__(self, parent, shape, dtype, forward, backward):
        self.parent = parent
        self.aval = ShapedArray(tuple(shape), np.dtype(dtype))
        self._forward, self._backward = forward, backward

    def __getitem__(self, idx):
        return self._forward(self.parent[...])

    def __setitem__(self, idx, value):
        self.parent[...] = self._backward(value)


# -- scratch buffers -------------------------------------------------------------------

def uninitialized(shape, dtype, fill="nan"):
    """JAX's interpret-mode initial value of an output or scratch buffer (``fill``: its
    ``InterpretParams.uninitialized_memory``)."""
    dtype = np.dtype(dtype)
    if fill == "zero":
        return jnp.zeros(shape, dtype)
    if dtypes.is_float(dtype):
        return jnp.full(shape, np.nan, dtype)
    if np.issubdtype(dtype, np.integer):
        return jnp.full(shape, np.iinfo(dtype).min, dtype)
    if dtype == np.bool_:
        return jnp.full(shape, False, dtype)
    raise NotImplementedError(f"pallas interpret mode: buffers of dtype {dtype}")


def is_semaphore(shape_type) -> bool:
    """A semaphore type: ``SemaphoreType.DMA``, ``SemaphoreType.DMA((n,))``,
    ``pl.semaphore``..."""
    if isinstance(shape_type, enum.Enum) and type(shape_type).__name__ == "SemaphoreType":
        return True
    inner = getattr(shape_type, "inner_aval", None)
    return (isinstance(inner, tuple) and len(inner) == 2
            and isinstance(inner[0], enum.Enum))


def scratch_ref(shape_type, fill="nan"):
    """A fresh ref for a scratch shape (``pltpu.VMEM((8, 128), f32)``, a semaphore...)."""
    if is_semaphore(shape_type):
        shape = () if isinstance(shape_type, enum.Enum) else tuple(shape_type.inner_aval[1])
        return KernelRef(new_ref(jnp.zeros(shape, np.int32)))
    aval = shape_type.get_array_aval() if hasattr(shape_type, "get_array_aval") else None
    if aval is None and hasattr(shape_type, "shape") and hasattr(shape_type, "dtype"):
        aval = ShapedArray(tuple(shape_type.shape), np.dtype(shape_type.dtype))
    if not isinstance(aval, ShapedArray) or dtypes.is_extended(aval.dtype):
        raise NotImplementedError(
            f"pallas_call in interpret mode: traxla has no scratch buffers of type "
            f"{shape_type}")
    return KernelRef(new_ref(uninitialized(aval.shape, aval.dtype, fill)))


def run_scoped(f, *types, collective_axes=(), **kw_types):
    """Calls ``f`` with fresh scratch refs of the given types (``pl.run_scoped``)."""
    from traxla.experimental.pallas.mosaic_call import in_compiled_kernel
    if in_compiled_kernel():  # a tpu.region allocating them (see mosaic_memory)
        from traxla.experimental.pallas import mosaic_memory
        return mosaic_memory.run_scoped(f, *types, collective_axes=collective_axes,
                                        **kw_types)
    is_leaf = lambda t: is_semaphore(t) or hasattr(t, "get_array_aval")  # noqa: E731
    refs = tree_util.tree_map(scratch_ref, types, is_leaf=is_leaf)
    kw_refs = tree_util.tree_map(scratch_ref, kw_types, is_leaf=is_leaf)
    return f(*refs, **kw_refs)
