"""JAX's registries for array-like Python types of a user's own (JAX 0.10.2's
``core.pytype_aval_mappings`` and ``dtypes.canonicalize_value_handlers``).

* ``pytype_aval_mappings``: type -> fn(value) -> its abstract value. A value of a type
  registered here (or of a subclass) is an array to ``typeof``, to ``shaped_abstractify`` and
  to tracing (a constant of that aval where it meets a traced operation).
* ``canonicalize_value_handlers``: type -> fn(value) -> a value of a type JAX knows (a NumPy
  array). A value is transferred to a device (a ``jit`` argument, ``device_put``, an eager
  operation's operand) only once its type has a handler here, as in JAX, where
  ``jax.jit(f)(v)`` of a type with an aval but no handler is "not a valid JAX type".

tensorflow-probability registers its variable proxy with both, mapping it to the entries of
``np.ndarray``: the built-in types (NumPy arrays and scalars, Python scalars) have entries to
be read so; traxla's own abstractification keeps its direct paths for them, and consults
these registries only for other types (``user_aval_fn``, ``value_handler_for``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.literals import TypedNdArray


def _ndarray_aval(x) -> ShapedArray:
    dtypes.check_valid_array_dtype(x, x.dtype)
    return ShapedArray(np.shape(x), dtypes.canonicalize(x.dtype), False)


def _numpy_scalar_aval(x) -> ShapedArray:
    return ShapedArray((), dtypes.canonicalize(np.dtype(x.dtype)), False)


def _python_scalar_aval(x) -> ShapedArray:
    return ShapedArray((), dtypes.python_scalar_dtype(x), type(x) is not bool)


def _str_aval(x):
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {str: _str_aval,
                                                                  np.ndarray: _ndarray_aval}
for _t in (bool, int, float, complex):
    pytype_aval_mappings[_t] = _python_scalar_aval
for _t in set(np.sctypeDict.values()):
    if issubclass(_t, np.generic) and _t not in (np.object_, np.str_, np.bytes_, np.void):
        pytype_aval_mappings[_t] = _numpy_scalar_aval
del _t

# The types whose entries are traxla's own (it reads them by its direct paths); a layer
# above adds its own types (the runtime's Array) with ``register_builtin``.
_builtin: set = set(pytype_aval_mappings)
_n_builtin = [len(pytype_aval_mappings)]


def register_builtin(t: type, fn) -> None:
    pytype_aval_mappings[t] = fn
    _builtin.add(t)
    _n_builtin[0] = len(_builtin)


def user_aval_fn(t: type):
    """The aval function registered for ``t`` (or its nearest registered base) by a user,
    else None; nothing to look up while only traxla's own entries are there."""
    if len(pytype_aval_mappings) <= _n_builtin[0]:
        return None
    for b in t.__mro__:
        if b not in _builtin:
            fn = pytype_aval_mappings.get(b)
            if fn is not None:
                return fn
    return None


# Registered handlers only: the built-in types' canonicalization is traxla's own.
value_handlers: dict[type, Callable] = {}


def value_handler_for(t: type):
    """The canonicalization handler registered for ``t`` or its nearest base, else None."""
    if not value_handlers:
        return None
    for b in t.__mro__:
        fn = value_handlers.get(b)
        if fn is not None:
            return fn
    return None


def register_canonicalize_value_handler(type_, handler) -> None:
    """JAX's: ``handler(value)`` turns a value of ``type_`` into one JAX knows (None: the
    value is used as it is)."""
    value_handlers[type_] = (lambda x: x) if handler is None else handler


class CanonicalizeValueHandlers:
    """JAX 0.10.2's ``dtypes.canonicalize_value_handlers`` (``jax.interpreters.xla.
    canonicalize_dtype_handlers``): reading any key gives the canonicalization of a value
    through ``np.asarray``; setting one registers a handler."""

    def __getitem__(self, key):
        return _canonicalize_array_like

    def __setitem__(self, key, value):
        register_canonicalize_value_handler(key, value)

    def __contains__(self, key):
        return key in value_handlers

    def get(self, key, default=None):
        return value_handlers.get(key, default)


def _canonicalize_array_like(x):
    x = np.asarray(x)
    return TypedNdArray(np.asarray(x, dtypes.canonicalize(x.dtype)))


canonicalize_value_handlers = CanonicalizeValueHandlers()
