"""``jax._src.earray``: arrays of extended dtypes. traxla's ``Array`` holds them itself (its
buffer is the physical array, its aval the extended dtype's), so ``EArray(aval, data)``
makes such an Array from the physical ``data``, and ``isinstance(x, EArray)`` is true of
an Array of an extended dtype other than a PRNG key's (as JAX's key arrays are a class of
their own)."""
from __future__ import annotations

from traxla.ir.avals import interned
from traxla.ir.dtypes import ExtendedDType
from traxla.ir.rules.random import is_key_dtype
from traxla.runtime import ArrayImpl
from traxla.runtime.array import make_array
from traxla.runtime.dispatch import to_array


class _EArrayType(type):
    def __instancecheck__(cls, x):
        return (type(x) is ArrayImpl and isinstance(x.aval.dtype, ExtendedDType)
                and not is_key_dtype(x.aval.dtype))


class EArray(metaclass=_EArrayType):
    """``EArray(aval, data)``: the Array of ``aval`` (an extended dtype's) whose physical
    array is ``data``."""

    def __new__(cls, aval, data):
        data = to_array(data)
        dtype = aval.dtype
        want = (tuple(aval.shape) + tuple(dtype.physical_shape), dtype.physical_dtype)
        if (tuple(data.shape), data.dtype) != want:
            raise ValueError(f"EArray of {aval.str_short(False)} needs physical data of shape "
                             f"{want[0]} and dtype {want[1]}, got {data.aval.str_short(False)}")
        return make_array(interned(aval), data._buf, data._placement)


__all__ = ["EArray"]
