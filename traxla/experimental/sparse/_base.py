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
