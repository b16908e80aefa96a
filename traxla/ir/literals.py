"""Host-side arrays that carry a JAX type: ``TypedNdArray``, JAX's (``jax._src.literals``).

JAX hands back every value of dtype ``float0`` (the tangent type of integer and boolean
values) as one of these, wherever it comes from: a jit program's output, an eager gradient,
``device_put``: a float0 value holds no data, so it never lives on a device."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.dtypes import float0


class TypedNdArray(np.ndarray):
    """A NumPy array with a JAX aval (its dtype never canonicalized; it may be weakly typed),
    as JAX's ``TypedNdArray``."""

    __slots__ = ("_aval", "_weak_type")

    def __new__(cls, val, aval: ShapedArray | None = None):
        obj = np.asarray(val).view(cls)
        if aval is not None:
            obj._aval = aval
        return obj

    def __array_finalize__(self, obj):
        self._aval = None
        self._weak_type = obj.aval.weak_type if isinstance(obj, TypedNdArray) else False

    @property
    def aval(self) -> ShapedArray:
        result = self._aval
        if result is None:  # (threads racing here all set the same value)
            result = self._aval = ShapedArray(self.shape, self.dtype, self._weak_type)
        return result

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def val(self) -> np.ndarray:
        return np.asarray(self)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # computed on plain NumPy arrays: a result is a plain NumPy value, as JAX's
        inputs = tuple(np.asarray(x) if isinstance(x, TypedNdArray) else x for x in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(x) if isinstance(x, TypedNdArray) else x
                                  for x in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __repr__(self):
        prefix = "TypedNdArray("
        dtype_str = (f"dtype={self.dtype.name}, weak_type=True)" if self.aval.weak_type
                     else f"dtype={self.dtype.name})")
        line_width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(np.asarray(self), prefix=prefix, suffix=",", separator=", ",
                                max_line_width=line_width)
        last_line_len = len(s) - s.rfind("\n") + 1
        sep = " " * len(prefix) if last_line_len + len(dtype_str) + 1 > line_width else " "
        return f"{prefix}{s},{sep}{dtype_str}"

    def __reduce__(self):
        # (JAX's passes the weak type where its constructor takes the aval, and its
        # unpickled copies fail to print; this one keeps the aval)
        return (TypedNdArray, (np.asarray(self), self.aval))


def float0_zeros(shape, aval: ShapedArray | None = None) -> TypedNdArray:
    """The value of a float0 array of ``shape``, as JAX hands one back (``aval``: its type,
    by default a strong ``float0`` of that shape)."""
    shape = tuple(shape)
    return TypedNdArray(np.zeros(shape, float0),
                        ShapedArray(shape, float0) if aval is None else aval)
