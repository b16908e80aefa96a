"""Array creation: array, asarray, zeros, ones, full, arange, linspace, eye, *_like."""
from __future__ import annotations

import numpy as np

from .. import lax
from ..ir import dtypes
from ..runtime import Array, device_put_numpy
from ..ir.avals import ShapedArray
from ..tracer import Tracer
from ._promotion import result_type


def _dtype(dtype):
    return None if dtype is None else dtypes.to_dtype(dtype)


def _shape(shape):
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def array(object, dtype=None, copy=True, ndmin=0):  # noqa: A002
    dtype = _dtype(dtype)
    if isinstance(object, (Tracer, Array)):
        out = object if dtype is None else lax.convert_element_type(object, dtype)
    elif isinstance(object, (list, tuple)) and any(
            isinstance(leaf, (Tracer, Array)) for leaf in _leaves(object)):
        from ._shape import stack
        out = stack([array(o) for o in object])
        if dtype is not None:
            out = lax.convert_element_type(out, dtype)
    else:
        weak = type(object) in (bool, int, float, complex) and dtype is None
        host = np.asarray(object)
        if host.dtype == object_dtype:
            raise TypeError(f"JAX does not support object arrays: got {object!r}")
        if dtype is None:
            dtype = (dtypes.python_scalar_dtype(object) if weak else dtypes.canonicalize(host.dtype))
        out = device_put_numpy(np.array(host, dtype), ShapedArray(host.shape, dtype, weak))
    if ndmin > len(lax.shape_of(out)):
        out = lax.reshape(out, (1,) * (ndmin - len(lax.shape_of(out))) + lax.shape_of(out))
    return out


object_dtype = np.dtype(object)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def asarray(a, dtype=None, order=None, copy=None):
    if isinstance(a, (Tracer, Array)) and (dtype is None or _dtype(dtype) == lax.dtype_of(a)):
        return a
    return array(a, dtype=dtype)


def full(shape, fill_value, dtype=None):
    shape = _shape(shape)
    if dtype is None:
        dtype, weak = result_type(fill_value)
    else:
        dtype, weak = _dtype(dtype), False
    value = lax._convert_element_type(fill_value, dtype, weak)
    if not lax.shape_of(value):
        return lax.broadcast(value, shape)
    from ._shape import broadcast_to
    return broadcast_to(value, shape)


def zeros(shape, dtype=None):
    return lax.broadcast(lax._convert_element_type(0, _dtype(dtype) or dtypes.default_float(), False),
                         _shape(shape))


def ones(shape, dtype=None):
    return lax.broadcast(lax._convert_element_type(1, _dtype(dtype) or dtypes.default_float(), False),
                         _shape(shape))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def _like(fill):
    def fn(a, dtype=None, shape=None):
        shp = lax.shape_of(a) if shape is None else _shape(shape)
        dt = _dtype(dtype) or lax.dtype_of(a)
        weak = dtype is None and lax.aval_of(a).weak_type
        return lax.broadcast(lax._convert_element_type(fill, dt, weak), shp)
    return fn


zeros_like = _like(0)
ones_like = _like(1)


def full_like(a, fill_value, dtype=None, shape=None):
    shp = lax.shape_of(a) if shape is None else _shape(shape)
    return full(shp, fill_value, _dtype(dtype) or lax.dtype_of(a))


def arange(start, stop=None, step=None, dtype=None):
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, Tracer):
            v._concretization_error(
                "arange", f"jnp.arange's {name} argument must be concrete: the size of an array "
                "must be known when tracing.")
    if stop is None and step is None:
        start, stop = 0, start
    step = 1 if step is None else step
    if dtype is None:
        dtype = dtypes.result_type_of(*((dtypes.python_scalar_dtype(v), True) if type(v) in
                                        (int, float, bool) else (np.asarray(v).dtype, False)
                                        for v in (start, stop, step)))[0]
    dtype = _dtype(dtype)
    if start == 0 and step == 1 and float(stop).is_integer() and dtypes.is_int(dtype):
        return lax.iota(dtype, max(int(stop), 0))
    return array(np.arange(start, stop, step, dtype=dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    dt = _dtype(dtype) or dtypes.default_float()
    if num == 0:
        out = zeros((0,), dt)
    elif num == 1:
        out = lax.broadcast(lax._convert_element_type(start, dt, False), (1,))
    else:
        start_ = lax._convert_element_type(start, dt, False)
        stop_ = lax._convert_element_type(stop, dt, False)
        div = num - 1 if endpoint else num
        step = lax.div(lax.sub(stop_, start_), lax._convert_element_type(div, dt, False))
        idx = lax.iota(dt, num)
        out = lax.add(start_, lax.mul(idx, step))
        if endpoint:
            from ._shape import concatenate
            out = concatenate([lax.slice(out, (0,), (num - 1,)), lax.broadcast(stop_, (1,))])
    if retstep:
        return out, (stop - start) / ((num - 1) if endpoint else num)
    return out


def eye(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dt = _dtype(dtype) or dtypes.default_float()
    rows = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(rows, lax._convert_element_type(k, dtypes.int32, False)), cols), dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)
