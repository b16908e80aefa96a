"""Wrapped functions with transformations stacked on them, as JAX's ``linear_util``
(``jax.extend.linear_util``): ``wrap_init(f)`` gives a ``WrappedFun``; ``flatten_fun`` and
``flatten_fun_nokwargs`` (``jax.api_util``) wrap it to take and return flat lists of leaves,
storing the output tree in a ``Store`` read after the call.

Libraries use these to trace a function themselves (``pe.trace_to_jaxpr_nounits``)."""
from __future__ import annotations

import inspect
from functools import partial
from typing import Callable

from traxla.ir.jaxpr import DebugInfo
from traxla.tree_util import tree_flatten, tree_unflatten


class StoreException(Exception):
    pass


class Store:
    """A box filled once by a transformation (the output tree), read after the call."""

    __slots__ = ("_val",)
    _EMPTY = object()

    def __init__(self):
        self._val = Store._EMPTY

    def store(self, val):
        if self._val is not Store._EMPTY:
            raise StoreException("Store occupied")
        self._val = val

    def reset(self):
        self._val = Store._EMPTY

    @property
    def val(self):
        if self._val is Store._EMPTY:
            raise StoreException("Store empty")
        return self._val

    def __nonzero__(self):
        return self._val is not Store._EMPTY

    __bool__ = __nonzero__


class WrappedFun:
    """``f`` with transformations: each ``(gen, gen_static_args)`` in ``transforms`` is
    called as ``gen(inner, *gen_static_args, *args)`` around the next one, innermost last."""

    __slots__ = ("f", "transforms", "params", "in_type", "debug_info", "stores")

    def __init__(self, f, transforms, stores, params, in_type, debug_info):
        self.f = f
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args, out_store) -> "WrappedFun":
        return WrappedFun(self.f, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def populate_stores(self, stores):
        for self_store, other_store in zip(self.stores, stores):
            if self_store is not None:
                self_store.store(other_store.val)

    def call_wrapped(self, *args, **kwargs):
        f = partial(self.f, **dict(self.params)) if self.params else self.f
        for gen, gen_static_args in reversed(self.transforms):
            f = partial(gen, f, *gen_static_args)
        return f(*args, **kwargs)

    def __repr__(self):
        return f"Wrapped function:\n  core: {getattr(self.f, '__name__', self.f)}"

    def __eq__(self, other):
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params)

    def __hash__(self):
        return hash((self.f, self.transforms, self.params))


def wrap_init(f: Callable, params=None, *, debug_info: DebugInfo | None = None) -> WrappedFun:
    """``f`` as a ``WrappedFun`` with no transformations (``params``: keyword arguments
    passed to ``f`` on every call)."""
    params = () if params is None else tuple(sorted(dict(params).items()))
    if debug_info is None:
        debug_info = DebugInfo("linear_util.wrap_init", getattr(f, "__name__", "fun"),
                               _sourceinfo(f), ())
    return WrappedFun(f, (), (), params, None, debug_info)


def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args):
    """``gen(f, store, *gen_static_args, *args)`` stacked on ``fun``; returns the new
    ``WrappedFun`` and a thunk reading what ``gen`` stored."""
    out_store = Store()
    return fun.wrap(lambda f, *a: gen(f, out_store, *a), gen_static_args, out_store), \
        (lambda: out_store.val)


def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """``gen(f, *gen_static_args, *args)`` stacked on ``fun``."""
    return fun.wrap(gen, gen_static_args, None)


def _flatten_fun(f, store, in_tree, *args_flat):
    py_args, py_kwargs = tree_unflatten(in_tree, args_flat)
    ans, out_tree = tree_flatten(f(*py_args, **py_kwargs))
    store.store(out_tree)
    return ans


def _flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    py_args = tree_unflatten(in_tree, args_flat)
    ans, out_tree = tree_flatten(f(*py_args))
    store.store(out_tree)
    return ans


def flatten_fun(f: WrappedFun, in_tree):
    """``f(*args, **kwargs)`` as a function of the leaves of ``(args, kwargs)`` (``in_tree``)
    returning the leaves of its result; the second value is the output tree's thunk."""
    return transformation_with_aux2(_flatten_fun, f, in_tree)


def flatten_fun_nokwargs(f: WrappedFun, in_tree):
    """``f(*args)`` as a function of the leaves of ``args`` (``in_tree``)."""
    return transformation_with_aux2(_flatten_fun_nokwargs, f, in_tree)


def _sourceinfo(fun) -> str:
    while isinstance(fun, partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


__all__ = ["Store", "StoreException", "WrappedFun", "wrap_init", "transformation2",
           "transformation_with_aux2", "flatten_fun", "flatten_fun_nokwargs"]
