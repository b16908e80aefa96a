"""The base class of traxla's sparse arrays (JAX's ``jax.experimental.sparse.JAXSparse``)."""
from __future__ import annotations

import abc
import math

from traxla.tracer import Tracer


def _canonicalize_shape(shape):
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


class JAXSparse(abc.ABC):
    """Base class for high-level JAX sparse objects."""
    __hash__ = None

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self) -> int: ...

    def __len__(self):
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __init__(self, args, *, shape):
        self.shape = _canonicalize_shape(shape)

    def __repr__(self):
        name = self.__class__.__name__
        try:
            nse, dtype, shape = self.nse, self.dtype, list(self.shape)
        except Exception:
            repr_ = f"{name}(<invalid>)"
        else:
            repr_ = f"{name}({dtype}{shape}, {nse=})"
        if isinstance(self.data, Tracer):
            repr_ = f"{type(self.data).__name__}[{repr_}]"
        return repr_

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for arg in self.tree_flatten()[0]:
            arg.block_until_ready()
        return self


def _not_implemented(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"{self.__class__}.{name}")
    method.__name__ = name
    return method


# Not abstract: not every sparse class has them (BCOO's come from sparsify).
for _name in ("sum", "__neg__", "__pos__", "__matmul__", "__rmatmul__", "__mul__", "__rmul__",
              "__add__", "__radd__", "__sub__", "__rsub__", "__getitem__"):
    setattr(JAXSparse, _name, _not_implemented(_name))


class _BufferedSparse(JAXSparse):
    """What BCOO and BCSR share: buffers named by ``_buffer_names`` (data first), the
    sorted/unique flags, their pytree form and their repr."""
    _buffer_names: tuple = ()
    _index_tail = 1  # trailing dimensions of ``indices`` after the batch ones (nse, ...)

    def _set_buffers(self, args, shape, indices_sorted, unique_indices):
        from traxla import numpy as jnp
        for name, buf in zip(self._buffer_names, args):
            setattr(self, name, jnp.asarray(buf))
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        JAXSparse.__init__(self, args, shape=shape)

    @property
    def _info(self):
        from traxla.experimental.sparse.util import SparseInfo
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _bufs(self):
        return tuple(getattr(self, name) for name in self._buffer_names)

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nse(self):
        return self.indices.shape[-self._index_tail]

    @property
    def n_batch(self):
        return self.indices.ndim - self._index_tail

    @property
    def n_dense(self):
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self):
        name = self.__class__.__name__
        try:
            nse, n_batch, n_dense = self.nse, self.n_batch, self.n_dense
            dtype, shape = self.dtype, list(self.shape)
        except Exception:
            repr_ = f"{name}(<invalid>)"
        else:
            extra = f", {nse=}"
            if n_batch:
                extra += f", {n_batch=}"
            if n_dense:
                extra += f", {n_dense=}"
            repr_ = f"{name}({dtype}{shape}{extra})"
        if isinstance(self.data, Tracer):
            repr_ = f"{type(self.data).__name__}[{repr_}]"
        return repr_

    def tree_flatten(self):
        return self._bufs, self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        for name, child in zip(cls._buffer_names, children):
            setattr(obj, name, child)
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"{cls.__name__}.tree_unflatten: invalid {aux_data=}")
        obj.__dict__.update(**aux_data)
        return obj


def _register_vmappable(cls, batched_word, keep_flags):
    """vmap maps an array of ``cls`` along one of its batch dimensions and stacks results
    as one (JAX's vmappable handlers; ``batched_word`` and ``keep_flags`` are where JAX's
    BCOO and BCSR handlers differ)."""
    from traxla.batching import register_vmappable
    name = cls.__name__

    def flags(val):
        return ({"indices_sorted": val.indices_sorted, "unique_indices": val.unique_indices}
                if keep_flags else {})

    def to_elt(cont, _, val, axis):
        if axis is None:
            return val
        if axis >= val.n_batch:
            raise ValueError(f"Cannot map in_axis={axis} for {name} array with n_batch="
                             f"{val.n_batch}. in_axes for batched {name} operations must "
                             f"correspond to a {batched_word} dimension.")
        return cls(tuple(cont(b, axis) for b in val._bufs),
                   shape=val.shape[:axis] + val.shape[axis + 1:], **flags(val))

    def from_elt(cont, axis_size, elt, axis):
        if axis is None:
            return elt
        if axis > elt.n_batch:
            raise ValueError(f"{name}: cannot add out_axis={axis} for {name} array with "
                             f"n_batch={elt.n_batch}. {name} batch axes must be a contiguous "
                             "block of leading dimensions.")
        return cls(tuple(cont(axis_size, b, axis) for b in elt._bufs),
                   shape=elt.shape[:axis] + (axis_size,) + elt.shape[axis:], **flags(elt))

    register_vmappable(cls, int, int, to_elt, from_elt, None)


# The other names of JAX's module (mostly its imports), as JAX's
from collections.abc import Sequence
from traxla import Array
import numpy as np
import traxla as jax
import traxla._src.core as core
import traxla._src.util as util
