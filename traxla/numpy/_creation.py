"""Array creation: array, asarray, zeros, ones, full, arange, linspace, eye, *_like."""
from __future__ import annotations

import operator
import sys

import numpy as np

from traxla import lax
from traxla.primitives.shapes import _eye
from traxla.api import device_put, jit
from traxla.sharding import reshard
from traxla.errors import InconclusiveDimensionOperation
from traxla.ir import dtypes
from traxla.ir.shape_poly import is_symbolic, max_dim
from traxla.runtime import ArrayImpl, device_put_numpy, transfer_guard
from traxla.ir.sharding import AbstractMesh
from traxla.runtime.placement import NamedSharding
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import Literal
from traxla.ir.literals import float0_zeros
from traxla.numpy._jitutil import as_jit_result
from traxla.tracer import EvalTrace, Tracer, current_trace
from traxla.numpy._promotion import result_type, broadcast_shapes
from traxla.numpy._shape import broadcast_to
from traxla.numpy._ufuncs import ufuncs


def _dtype(dtype):
    if dtype is None:
        return None
    # The caller's name is the public function's (zeros, asarray...), for the x64 warning.
    return dtypes.check_user_dtype(dtype, sys._getframe(1).f_code.co_name)


def _check_placement(device, out_sharding):
    if device is not None and out_sharding is not None:
        raise ValueError("Only one of `device` or `out_sharding` can be set. Got "
                         f"{device=} and {out_sharding=}")


def placed(out, out_sharding, device=None):
    """``out`` placed as a creation function's ``device=`` / ``out_sharding=`` ask (a
    sharding on the empty mesh, as ``jax.typeof(x).sharding`` outside any mesh, asks for
    nothing)."""
    if out_sharding is not None:
        if getattr(getattr(out_sharding, "mesh", None), "empty", False):
            return out
        return reshard(out, out_sharding)
    if device is not None:
        return device_put(out, device)
    return out


def _shape(shape):
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "aval") and not shape.aval.shape):
        shape = (shape,)
    return tuple(lax._concrete_shape(shape))


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None,  # noqa: A002
          out_sharding=None):
    _check_placement(device, out_sharding)
    if device is not None or out_sharding is not None:
        return placed(array(object, dtype, copy, order, ndmin), out_sharding, device)
    if order is not None and order != "K":
        raise NotImplementedError("Only implemented for order='K'")
    dtype = _dtype(dtype)
    if dtype is None and ndmin == 0 and isinstance(object, Tracer):
        extended = isinstance(object.dtype, dtypes.ExtendedDType)  # (a traced key: itself)
        return lax.copy_p_bind(object) if copy and not extended else as_jit_result(object)
    m = getattr(object, "__jax_array__", None)  # JAX's protocol (flax's Variables use it)
    if m is not None and not isinstance(object, (Tracer, ArrayImpl)):
        object = m()
    leaves = list(_leaves(object))
    if any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    if isinstance(object, (Tracer, ArrayImpl)):
        # JAX copies a concrete array too (a new Array over a new buffer, which can be
        # donated apart from the original); while tracing, the copy is an equation on it
        if not copy:
            out = object
        elif isinstance(object.dtype, dtypes.ExtendedDType):  # keys: their data copied
            out = object.copy() if isinstance(object, ArrayImpl) else object
        else:
            out = lax.copy_p_bind(object)
        if dtype is None:
            dtype, weak = lax.dtype_of(out), lax.aval_of(out).weak_type
        else:
            weak = False
        # a folded constant (a Literal, traxla's IR) never reaches the caller: it is an Array
        out = lax._lift(lax._convert_element_type(out, dtype, weak))
    elif isinstance(object, (list, tuple)) and any(isinstance(leaf, (Tracer, ArrayImpl))
                                                    for leaf in leaves):
        if dtype is None:
            dtype = result_type(*leaves)[0]
        parts = [lax.expand_dims(array(o, dtype=dtype, copy=False), (0,)) for o in object]
        while len(parts) > 16:
            parts = [lax.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
        out = lax.concatenate(parts, 0)
    else:
        weak = type(object) in (int, float, complex) and dtype is None  # not bool, as JAX
        host = _host_array(object, dtype)
        if host.dtype == object_dtype:
            raise TypeError(f"JAX does not support object arrays: got {object!r}")
        dtypes.check_valid_array_dtype(object, host.dtype)
        if dtype is None:
            dtype = (dtypes.python_scalar_dtype(object) if weak else dtypes.canonicalize(host.dtype))
        if dtype == dtypes.float0:  # no data: a host-side value, as JAX hands float0s back
            out = float0_zeros(host.shape)
        elif isinstance(current_trace(), EvalTrace):
            out = device_put_numpy(np.array(host, dtype), ShapedArray(host.shape, dtype, weak))
        else:  # a constant of the program being staged: no transfer of the user's, as JAX's
            with transfer_guard.internal():
                out = device_put_numpy(np.array(host, dtype), ShapedArray(host.shape, dtype,
                                                                           weak))
    if ndmin > len(lax.shape_of(out)):
        out = lax.expand_dims(out, tuple(range(ndmin - len(lax.shape_of(out)))))
    return out


object_dtype = np.dtype(object)


def _host_array(obj, dtype):
    """``np.asarray(obj)`` with JAX's overflow errors for Python ints: one that does not fit
    int64 (NumPy would make an object array), or, with no dtype asked for, one that does not
    fit the default int (it would wrap silently when canonicalized)."""
    ints = [x for x in _leaves(obj) if type(x) is int]
    if ints:
        if type(obj) is int and dtype is None:
            info = np.iinfo(dtypes.default_int())
            if not info.min <= obj <= info.max:
                raise OverflowError(f"Python int {obj} too large to convert to {info.dtype}")
        wide = np.iinfo(np.int64)
        if any(not wide.min <= x <= wide.max for x in ints) and not (
                type(obj) is int and dtype is not None):
            raise OverflowError("Python int too large to convert to C long")
    host = np.asarray(obj)
    if ints and dtype is None and host.dtype.kind == "i":
        info = np.iinfo(dtypes.canonicalize(host.dtype))
        for x in ints:
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python integer {x} out of bounds for {info.dtype}")
    return host


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    return array(a, dtype=_dtype(dtype), copy=bool(copy), order=order, device=device,
                 out_sharding=out_sharding)


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    dtype = _dtype(dtype)
    if not np.shape(fill_value) if not hasattr(fill_value, "aval") else not lax.shape_of(fill_value):
        out = lax.full(_shape(shape), fill_value, dtype)
    else:
        out = lax.broadcast_to(asarray(fill_value, dtype=dtype), _shape(shape))
    return placed(out, out_sharding, device)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    out = lax.full(_shape(shape), 0, _dtype(dtype) or dtypes.default_float())
    return placed(out, out_sharding, device)


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    out = lax.full(_shape(shape), 1, _dtype(dtype) or dtypes.default_float())
    return placed(out, out_sharding, device)


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    return zeros(shape, dtype, device=device, out_sharding=out_sharding)


class _Prototype:
    """Stands for an object with a shape and a dtype but no data (a ShapeDtypeStruct, or a
    proxy such as flax's hijax Variable), which JAX's ``*_like`` functions accept: its aval
    is read, and its sharding on a mesh, which the result takes as JAX's ``full_like`` does."""

    __slots__ = ("aval", "_placement")

    def __init__(self, a):
        dt = a.dtype if dtypes.is_extended(a.dtype) else dtypes.canonicalize(np.dtype(a.dtype))
        self.aval = ShapedArray(tuple(a.shape), dt, bool(getattr(a, "weak_type", False)))
        sharding = getattr(a, "sharding", None)
        self._placement = (sharding if type(sharding) is NamedSharding
                           and not isinstance(sharding.mesh, AbstractMesh)
                           and getattr(a, "_committed", True) else None)


def prototype(a):
    """``a``, or a ``_Prototype`` for a duck-typed object with ``shape`` and ``dtype``."""
    if (isinstance(a, (Tracer, ArrayImpl, np.ndarray, np.generic, Literal))
            or not (hasattr(a, "shape") and hasattr(a, "dtype"))):
        return a
    return _Prototype(a)


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    out = lax.full_like(prototype(a), 0, _dtype(dtype), None if shape is None else _shape(shape))
    return placed(out, out_sharding, device)


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    out = lax.full_like(prototype(a), 1, _dtype(dtype), None if shape is None else _shape(shape))
    return placed(out, out_sharding, device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    if device is not None or out_sharding is not None:
        return placed(full_like(a, fill_value, dtype, shape), out_sharding, device)
    a = prototype(a)
    dtype = _dtype(dtype)
    shape = None if shape is None else _shape(shape)
    if not (np.shape(fill_value) if not hasattr(fill_value, "aval") else lax.shape_of(fill_value)):
        return lax.full_like(a, fill_value, dtype, shape)
    shape = lax.shape_of(a) if shape is None else shape
    dtype = result_type(a)[0] if dtype is None else dtype
    return lax.broadcast_to(asarray(fill_value, dtype=dtype), shape)


def _concrete_scalar(name, v):
    if isinstance(v, Tracer):
        v._concretization_error(
            "arange", f"jnp.arange's {name} argument must be concrete: the size of an array "
            "must be known when tracing.")
    if v is not None and np.ndim(v) != 0:
        raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
    return v


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    _check_placement(device, out_sharding)
    if device is not None or out_sharding is not None:
        return placed(arange(start, stop, step, dtype), out_sharding, device)
    dtype = _dtype(dtype)
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete_scalar(start_name, start)
    stop = _concrete_scalar("stop", stop)
    step = _concrete_scalar("step", step)
    if any(is_symbolic(v) for v in (start, stop, step)):
        if stop is None:
            start, stop = 0, start
        return _arange_dynamic(start, 1 if step is None else step, stop,
                               dtype or dtypes.default_int())
    if dtype is None:
        dtype = result_type(start, *(x for x in (stop, step) if x is not None))[0]
    if any(np.iscomplexobj(v) for v in (start, stop, step) if v is not None):
        raise ValueError("Passing complex start/stop/step to jnp.arange is not supported.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        working = (np.dtype(np.float32) if dtypes.is_float(dtype) and dtype.itemsize < 4
                   else dtype)
        size = max(0, int(np.ceil((stop - start) / step)))
        return lax.convert_element_type(
            lax.add(lax.convert_element_type(start, working),
                    lax.mul(lax.convert_element_type(step, working),
                            lax.broadcasted_iota(working, (size,), 0))), dtype)
    if start == 0:
        return lax.broadcasted_iota(dtype, (max(0, int(np.ceil(stop))),), 0)
    size = max(0, int(np.ceil(stop - start)))
    return lax.add(lax.convert_element_type(start, dtype), lax.broadcasted_iota(dtype, (size,), 0))


def _arange_dynamic(start, step, stop, dtype):
    """``arange`` with a symbolic start, stop or step (JAX's ``_arange_dynamic``)."""
    for v in (start, stop, step):
        if not is_symbolic(v) and not isinstance(v, (int, np.integer)):
            raise ValueError("In arange with non-constant arguments all of start, stop, and "
                             "step must be either dimension expressions or integers: "
                             f"start={start}, stop={stop}, step={step}")
    try:
        if step == 0:
            raise ValueError("arange has step == 0")
        step_gt_0 = step > 0
    except InconclusiveDimensionOperation as e:
        raise InconclusiveDimensionOperation(
            f"In arange with non-constant arguments the step ({step}) must be resolved "
            f"statically if it is > 0 or < 0.\nDetails: {e}") from None
    gap = step if step_gt_0 else -step
    distance = (stop - start) if step_gt_0 else (start - stop)
    size = max_dim(0, distance + gap - 1) // gap
    return lax.add(array(start, dtype=dtype),
                   lax.mul(array(step, dtype=dtype), lax.broadcasted_iota(dtype, (size,), 0)))


def _linspace_impl(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = lax._asarray(start), lax._asarray(stop)
    if dtype is None:
        dtype = _to_inexact(result_type(start, stop)[0])
    computation = _to_inexact(dtype)
    start = start.astype(computation)
    stop = stop.astype(computation)
    bounds = list(broadcast_shapes(lax.shape_of(start), lax.shape_of(stop)))
    b_start = broadcast_to(start, bounds)
    b_stop = broadcast_to(stop, bounds)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = ufuncs["true_divide"](lax.convert_element_type(ufuncs["subtract"](stop, start),
                                                               computation),
                                      asarray(div, dtype=computation))
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = dtypes.finfo(computation).dtype
        step = ufuncs["true_divide"](lax.iota(real, div).reshape(iota_shape), asarray(div, real))
        step = step.astype(computation)
        out = ufuncs["add"](ufuncs["multiply"](b_start.reshape(bounds), ufuncs["subtract"](1, step)),
                            ufuncs["multiply"](b_stop.reshape(bounds), step))
        if endpoint:
            nd = len(lax.shape_of(out))
            out = lax.concatenate([out, lax.expand_dims(b_stop, (axis,))], axis % nd)
    elif num == 1:
        delta = asarray(np.nan if endpoint else ufuncs["subtract"](stop, start), dtype=computation)
        out = b_start.reshape(bounds)
    else:
        empty_shape = list(broadcast_shapes(lax.shape_of(start), lax.shape_of(stop)))
        empty_shape.insert(axis, 0)
        delta = lax.full((), np.nan, computation)
        out = empty(empty_shape, dtype)
    if dtypes.is_int(dtype) and not dtypes.is_int(lax.dtype_of(out)):
        out = lax.floor(out)
    result = lax._convert_element_type(out, dtype, False)
    return (result, delta) if retstep else result


def _to_inexact(dt):
    return dt if dtypes.is_inexact(dt) else dtypes.default_float()


_linspace_impl.__name__ = "_linspace"
_linspace = jit(_linspace_impl, static_argnums=(2, 3, 4, 5, 6),
                static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = operator.index(num)
    axis = operator.index(axis)
    return _linspace(start, stop, num, endpoint, retstep, _dtype(dtype), axis)


def eye(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dt = _dtype(dtype) or dtypes.default_float()
    return _eye(N, M, k, dt)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)
