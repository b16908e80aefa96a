"""Installs Python operators and array methods on traxla's Array and on tracers,
so ``x * 2.0 + 1.0`` binds the same primitives eagerly and under a trace."""
from __future__ import annotations

import abc
import functools
import importlib

import numpy as _np

from traxla import lax
from traxla.api import device_put
from traxla.ir import dtypes
from traxla.runtime import ArrayImpl
from traxla.runtime.array import Array
from traxla.tracer import Tracer
from traxla.ir.traceback_util import filter_exception, register_boundary
from traxla.numpy import _eager, _indexing, _linalg, _reductions, _shape, _ufuncs
from traxla.numpy._ufuncs import ufuncs
from traxla.ir.shape_poly import DimExpr
from traxla.ir.rules.export import dim_as_value_p
from traxla.ir.rules.refs import is_ref_aval
from traxla.numpy._creation import zeros
from traxla.numpy._sorting import sort, argsort
from traxla.numpy._promotion import ensure_arraylike


def _swap(fn):
    return lambda self, other: fn(other, self)


def _defer(fn, name):
    """Binary operators return NotImplemented for operands they don't know."""
    def op(self, other):
        try:  # a boundary of traceback filtering (ir/traceback_util.py)
            t = type(other)
            if t is not ArrayImpl and t is not float and t is not int:  # the common cases first
                if not _known(other):
                    m = getattr(other, "__jax_array__", None)  # JAX's protocol
                    if m is None:
                        return NotImplemented
                    other = m()
                if isinstance(other, DimExpr):  # an export's symbolic dimension used as a value
                    other = dim_as_value_p.bind(dim=other)
            try:
                return fn(self, other)
            except TypeError:
                _refuse_ref(self, name)
                raise
        except Exception as e:
            filter_exception(e)
            raise

    return register_boundary(op)


def _refuse_ref(x, name):
    """JAX's error for an operator applied to an array ref (its type has no such method)."""
    if is_ref_aval(getattr(x, "aval", None)):
        raise AttributeError(f"'AbstractRef' object has no attribute '_{name.strip('_')}'") \
            from None


def _ref_method(fn, name):
    """A traced array's method, refused on a ref as JAX refuses it (AbstractRef has none)."""
    def method(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except Exception:
            if is_ref_aval(getattr(self, "aval", None)):
                raise AttributeError(f"'AbstractRef' object has no attribute '{name}'") \
                    from None
            raise
    method.__name__ = getattr(fn, "__name__", name)
    return method


def _unary(fn, name):
    def op(self):
        try:
            return fn(self)
        except TypeError:
            _refuse_ref(self, name)
            raise
    return op


_KNOWN_SCALARS = frozenset((bool, int, float, complex))


def _known(x) -> bool:
    return type(x) in _KNOWN_SCALARS or isinstance(
        x, (_np.ndarray, _np.generic, ArrayImpl, Tracer, DimExpr))  # DimExpr: an export's dimension


def _astype(self, dtype, copy=False, device=None):
    dtype = dtypes.default_float() if dtype is None else dtypes.check_user_dtype(dtype, "astype")
    if dtypes.is_complex(self.dtype) and dtypes.is_bool(dtype):
        self = ufuncs["not_equal"](self, 0)
    return lax._lift(lax._convert_element_type(self, dtype, False))  # an Array, not a Literal


def _clip(self, min=None, max=None):  # noqa: A002
    return _ufuncs.clip(self, min=min, max=max)


def _round(self, decimals=0, out=None):
    return _ufuncs.round(self, decimals=decimals, out=out)


def _operator_round(self, ndigits=None):
    out = _ufuncs.round(self, decimals=ndigits or 0)
    return out if ndigits is not None else _astype(out, int)  # round(x) is an int, as round(7.5)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return _shape.reshape(self, shape, order)


def _transpose(self, *axes):
    if not axes or axes == (None,):
        return _shape.transpose(self)
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _shape.transpose(self, axes)


def _truediv(x, y):
    return ufuncs["true_divide"](x, y)


_OPERATORS = {
    "__add__": ufuncs["add"], "__sub__": ufuncs["subtract"], "__mul__": ufuncs["multiply"],
    "__truediv__": _truediv, "__floordiv__": _ufuncs.floor_divide, "__mod__": _ufuncs.remainder,
    "__pow__": _ufuncs.power, "__matmul__": _linalg.matmul, "__divmod__": _ufuncs.divmod,
    "__and__": ufuncs["bitwise_and"], "__or__": ufuncs["bitwise_or"], "__xor__": ufuncs["bitwise_xor"],
    "__lshift__": _ufuncs.left_shift, "__rshift__": _ufuncs.right_shift,
    "__lt__": ufuncs["less"], "__le__": ufuncs["less_equal"], "__gt__": ufuncs["greater"],
    "__ge__": ufuncs["greater_equal"], "__eq__": ufuncs["equal"], "__ne__": ufuncs["not_equal"],
}
_REFLECTED = {"__radd__": "__add__", "__rsub__": "__sub__", "__rmul__": "__mul__",
              "__rtruediv__": "__truediv__", "__rfloordiv__": "__floordiv__", "__rmod__": "__mod__",
              "__rpow__": "__pow__", "__rmatmul__": "__matmul__", "__rand__": "__and__",
              "__ror__": "__or__", "__rxor__": "__xor__", "__rlshift__": "__lshift__",
              "__rrshift__": "__rshift__", "__rdivmod__": "__divmod__"}

_UNARY = {
    "__neg__": ufuncs["negative"], "__pos__": _ufuncs.positive, "__abs__": _ufuncs.abs,
    "__invert__": _ufuncs.invert,
}

def _view(self, dtype=None, type=None):
    """A bitwise copy of the array viewed as ``dtype`` (``lax.bitcast_convert_type``, with
    the last axis resized when the bit widths differ), as JAX's ``Array.view``."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = dtypes.check_user_dtype(dtype, "view")
    src = lax.dtype_of(self)
    shape = lax.shape_of(self)
    bits_in, bits_out = src.itemsize * 8, dtype.itemsize * 8
    if not shape:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return _view(lax.expand_dims(self, (0,)), dtype).squeeze()
    if (shape[-1] * bits_in) % bits_out != 0:
        raise ValueError("When changing to a larger dtype, its size must be a divisor "
                         "of the total size in bytes of the last axis of the array.")
    if src == dtype:
        return self
    # bitcast_convert_type takes neither bool nor complex: go through a compatible type
    if dtypes.is_bool(src):
        return _view(_astype(self, _np.uint8), dtype)
    if dtypes.is_complex(src):
        part = dtypes.float64 if src == dtypes.complex128 else dtypes.float32
        pairs = (zeros((*shape[:-1], shape[-1] * 2), part)
                 .at[..., 0::2].set(_ufuncs.real(self)).at[..., 1::2].set(_ufuncs.imag(self)))
        return _view(pairs, dtype)
    if dtypes.is_bool(dtype):
        return _astype(_view(self, _np.uint8), bool)
    if dtypes.is_complex(dtype):
        part = dtypes.float64 if dtype == dtypes.complex128 else dtypes.float32
        out = _astype(_view(self, part), dtype)
        return out[..., 0::2] + 1j * out[..., 1::2]
    if bits_in < bits_out:
        factor = bits_out // bits_in
        grouped = _reshape(self, (*shape[:-1], shape[-1] // factor, factor))
        return lax.bitcast_convert_type(grouped, dtype)
    out = lax.bitcast_convert_type(self, dtype)
    if bits_in > bits_out:
        out_shape = lax.shape_of(out)
        return _reshape(out, (*out_shape[:-2], out_shape[-2] * out_shape[-1]))
    return out


_METHODS = {
    "view": _view, "__round__": _operator_round,
    "__getitem__": _indexing.getitem, "astype": _astype, "reshape": _reshape,
    "transpose": _transpose, "sum": _reductions.sum, "prod": _reductions.prod,
    "max": _reductions.max, "min": _reductions.min, "mean": _reductions.mean,
    "any": _reductions.any, "all": _reductions.all, "argmax": _reductions.argmax,
    "argmin": _reductions.argmin, "ravel": _shape.ravel, "flatten": _shape.ravel,
    "squeeze": _shape.squeeze, "swapaxes": _shape.swapaxes, "clip": _clip,
    "round": _round, "dot": _linalg.dot,
}


def _method(module_name, fn_name):
    """An array method forwarding to ``traxla.numpy.<module>.<fn>`` (resolved lazily)."""
    def method(self, *args, **kwargs):
        mod = importlib.import_module(f"traxla.numpy.{module_name}")
        return getattr(mod, fn_name)(self, *args, **kwargs)
    method.__name__ = fn_name
    return method


def _sort_method(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sort(self, axis, kind=kind, order=order, stable=stable, descending=descending)


def _argsort_method(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return argsort(self, axis, kind=kind, order=order, stable=stable, descending=descending)


_METHODS.update({
    "var": _method("_reductions", "var"), "std": _method("_reductions", "std"),
    "ptp": _method("_reductions", "ptp"), "cumsum": _method("_reductions", "cumsum"),
    "cumprod": _method("_reductions", "cumprod"), "sort": _sort_method,
    "argsort": _argsort_method, "take": _method("_indexing", "take"),
    "trace": _method("_diagonals_tiles", "trace"), "diagonal": _method("_diagonals_tiles", "diagonal"),
    "repeat": _method("_diagonals_tiles", "repeat"), "conj": _method("_ufuncs", "conj"),
    "conjugate": _method("_ufuncs", "conjugate"),
})



def _byteswap(self):
    """The bytes of each element reversed (JAX's ``Array.byteswap``)."""
    if dtypes.is_complex(self.dtype):
        return lax.complex(_byteswap(_ufuncs.real(self)), _byteswap(_ufuncs.imag(self)))
    if self.dtype.itemsize == 1:
        return _copy(self)
    as_bytes = lax.bitcast_convert_type(self, _np.dtype("uint8"))
    return lax.bitcast_convert_type(lax.rev(as_bytes, [lax.shape_of(self).__len__()]), self.dtype)


def _copy(self):
    return importlib.import_module("traxla.numpy._dtypes_api").copy(self)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    mod = importlib.import_module("traxla.numpy._searching")
    return mod.compress(condition, self, axis=axis, out=out, size=size, fill_value=fill_value)


def _nonzero(self, *, fill_value=None, size=None):
    mod = importlib.import_module("traxla.numpy._searching")
    return mod.nonzero(self, size=size, fill_value=fill_value)


def _contains(self, other):
    """``other in self`` as JAX's: a 1-D array and a scalar query only."""
    if other is None or isinstance(other, str):
        raise TypeError(f"Array.__contains__: unsupported operand type {type(other)}.")
    query = ensure_arraylike("Array.__contains__", other)
    if len(lax.shape_of(self)) != 1:
        raise ValueError("Array.__contains__: search array must be one-dimensional,"
                         f" got arr.shape={self.shape}.")
    if len(lax.shape_of(query)) != 0:
        raise ValueError("Array.__contains__: query value must be a scalar,"
                         f" got query.shape={query.shape}")
    return _reductions.any(ufuncs["equal"](self, query))


def _unimplemented_setitem(self, i, x):
    raise TypeError("JAX arrays are immutable and do not support in-place item assignment."
                    " Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method:"
                    " https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


ARRAY_API_VERSION = "2024.12"


def _array_namespace(self, *, api_version=None):
    """The Python array API namespace of the array: ``traxla.numpy``."""
    if api_version is not None and api_version != ARRAY_API_VERSION:
        raise ValueError(f"{api_version=!r} is not available; "
                         f"available versions are: {[ARRAY_API_VERSION]}")
    return importlib.import_module("traxla.numpy")


def _to_device(self, device, *, stream=None):
    """A copy of the array placed on ``device`` (a Device or a sharding), committed to it;
    traced, a ``device_put`` equation (JAX's ``Array.to_device``)."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    return device_put(self, device)


def _notimplemented_flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


_METHODS.update({
    "argpartition": _method("_searching", "argpartition"), "byteswap": _byteswap,
    "choose": _method("_searching", "choose"), "compress": _compress, "nonzero": _nonzero,
    "searchsorted": _method("_searching", "searchsorted"), "__contains__": _contains,
    "__setitem__": _unimplemented_setitem, "__array_namespace__": _array_namespace,
    "to_device": _to_device,
})
# a traced array's copies bind ``copy`` (a concrete Array has its own host copy)
_TRACER_METHODS = {"copy": _copy, "__copy__": _copy,
                   "__deepcopy__": lambda self, memo: _copy(self)}

_PROPERTIES = {
    "flat": _notimplemented_flat,
    "itemsize": lambda self: self.dtype.itemsize,
    "nbytes": lambda self: self.size * self.dtype.itemsize,
    "T": lambda self: _shape.transpose(self),
    "mT": lambda self: _shape.matrix_transpose(self),
    "real": lambda self: _ufuncs.real(self),
    "imag": lambda self: _ufuncs.imag(self),
    "at": lambda self: _indexing._IndexUpdateHelper(self),
}


def install(cls, wrap=lambda fn: fn):
    for name, fn in _OPERATORS.items():
        setattr(cls, name, _defer(wrap(fn), name))
    for name, base in _REFLECTED.items():
        setattr(cls, name, _defer(_swap(wrap(_OPERATORS[base])), name))
    for name, fn in _UNARY.items():
        setattr(cls, name, _unary(wrap(fn), name) if cls is Tracer else wrap(fn))
    for name, fn in _METHODS.items():
        plain = cls is not Tracer or name in ("__getitem__", "__setitem__")
        setattr(cls, name, fn if plain else _ref_method(fn, name))
    for name, fn in _PROPERTIES.items():
        if fn is not None and not (name == "nbytes" and cls is ArrayImpl):
            setattr(cls, name, property(fn))
    if cls is Tracer:
        for name, fn in _TRACER_METHODS.items():
            setattr(cls, name, _ref_method(fn, name))


install(ArrayImpl, _eager.eager_cached)  # concrete operands: cached compiled programs
install(Tracer)


def _abstract(name, fn):
    """JAX's abstract method of ``jax.Array`` (named and documented as ``fn``)."""
    @functools.wraps(fn)
    def method(*args, **kwargs):
        raise NotImplementedError(f"Cannot call abstract method {name}")
    return abc.abstractmethod(method)


def install_abstract(cls):
    """Every operator, method and property an array has, on the base class ``jax.Array``
    as an abstract method, as JAX's (``dir(jax.Array)``, ``jax.Array.sum.__doc__``)."""
    own = dict(_OPERATORS)
    own.update({name: _OPERATORS[base] for name, base in _REFLECTED.items()})
    own.update(_UNARY)
    own.update(_METHODS)
    own.update(_TRACER_METHODS)
    own["item"] = ArrayImpl.item
    for name, fn in own.items():
        if name not in cls.__dict__:
            setattr(cls, name, _abstract(name, fn))
    for name, fn in _PROPERTIES.items():
        if fn is not None and name not in cls.__dict__:
            setattr(cls, name, property(_abstract(name, fn)))


install_abstract(Array)


def _array_module(self, types):
    """NEP 37's hook, as JAX's: ``traxla.numpy`` for arrays, NumPy arrays and tracers."""
    if all(issubclass(t, (Array, Tracer, _np.ndarray)) for t in types):
        return importlib.import_module("traxla.numpy")
    return NotImplemented


ArrayImpl.__array_module__ = _array_module


def _tracer_iter(self):
    """A traced array iterates as JAX's: one ``lax.index_in_dim`` (a strided ``slice`` and a
    ``squeeze``) per leading index."""
    shape = lax.shape_of(self)
    if not shape:
        raise TypeError("iteration over a 0-d array")  # same as numpy error
    return (lax.index_in_dim(self, i, keepdims=False) for i in range(shape[0]))


Tracer.__iter__ = _tracer_iter
