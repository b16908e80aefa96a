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


class EqualStore:
    """A ``Store`` that accepts storing again a value equal to the one it holds."""

    __slots__ = ("_store",)

    def __init__(self):
        self._store = Store()

    @property
    def val(self):
        return self._store.val

    def store(self, val):
        try:
            self._store.store(val)
        except StoreException as e:
            try:
                okay = bool(self._store._val == val)
            except Exception:
                raise e from None
            if not okay:
                raise StoreException("Store occupied with not-equal value") from None

    def reset(self):
        self._store.reset()


def _fun_name(f, default="<unnamed function>"):
    while isinstance(f, partial):
        f = f.func
    return getattr(f, "__name__", default)


class WrappedFun:
    """``f`` with transformations (JAX's ``lu.WrappedFun``): each ``(gen, gen_static_args)``
    in ``transforms`` (outermost first) is called as ``gen(inner, *gen_static_args, *args)``,
    or ``gen(inner, store, *gen_static_args, *args)`` when it has an output store;
    ``f_transformed`` is that composition, built once when a transformation is added."""

    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f, f_transformed, transforms, stores, params, in_type, debug_info):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self):
        return _fun_name(self.f, "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args, out_store) -> "WrappedFun":
        """Adds a transformation (and its store, or None) outside the others."""
        if out_store is None:
            inner = partial(gen, self.f_transformed, *gen_static_args)
        else:
            inner = partial(gen, self.f_transformed, out_store, *gen_static_args)
        return WrappedFun(self.f, inner, ((gen, gen_static_args),) + self.transforms,
                          (out_store,) + self.stores, self.params, None, self.debug_info)

    def populate_stores(self, stores):
        """Copies the values of ``stores`` into this function's own."""
        for self_store, other_store in zip(self.stores, stores):
            if self_store is not None:
                self_store.store(other_store.val)

    def call_wrapped(self, *args, **kwargs):
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, dbg) -> "WrappedFun":
        return WrappedFun(self.f, self.f_transformed, self.transforms, self.stores,
                          self.params, self.in_type, dbg)

    def with_unknown_names(self) -> "WrappedFun":
        dbg = self.debug_info
        if dbg is None:
            return self
        return self.replace_debug_info(DebugInfo(dbg.traced_for, dbg.func_name,
                                                 dbg.func_src_info, None, None))

    def __repr__(self):
        stack = [f"{i}   : {_fun_name(gen)}   {_fun_name(args)}"
                 for i, (gen, args) in enumerate(self.transforms)]
        return "Wrapped function:\n" + "\n".join(stack) + "\nCore: " + _fun_name(self.f) + "\n"

    def __eq__(self, other):
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params
                and self.in_type == other.in_type)

    def __hash__(self):
        return hash((self.f, self.transforms, self.params, self.in_type))


def wrap_init(f: Callable, params=None, *, debug_info: DebugInfo | None = None) -> WrappedFun:
    """``f`` as a ``WrappedFun`` with no transformations (``params``: keyword arguments
    passed to ``f`` on every call)."""
    params_dict = {} if params is None else dict(params)
    params = tuple(sorted(params_dict.items()))
    if debug_info is None:
        debug_info = DebugInfo("linear_util.wrap_init", getattr(f, "__name__", "fun"),
                               _sourceinfo(f), ())
    f_transformed = partial(f, **params_dict) if params_dict else f
    return WrappedFun(f, f_transformed, (), (), params, None, debug_info)


def annotate(f: WrappedFun, in_type) -> WrappedFun:
    """``f`` with its input type (a tuple of avals) recorded."""
    if f.in_type is not None:
        raise ValueError("annotate: the function already has an input type")
    if in_type is None:
        return f
    if type(in_type) is not tuple:
        raise TypeError(f"annotate: in_type must be a tuple of avals, got {in_type!r}")
    return WrappedFun(f.f, f.f_transformed, f.transforms, f.stores, f.params, in_type,
                      f.debug_info)


def _curry(f):
    """``f(a, *rest)`` callable as ``f(a)(*rest)`` too (JAX's ``util.curry``)."""
    return partial(partial, f)


@_curry
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """``gen(f, *gen_static_args, *args)`` stacked on ``fun``."""
    return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args, use_eq_store=False,
                             unk_names=False):
    """``gen(f, store, *gen_static_args, *args)`` stacked on ``fun``; returns the new
    ``WrappedFun`` and a thunk reading what ``gen`` stored."""
    out_store = EqualStore() if use_eq_store else Store()
    fun = fun.wrap(gen, gen_static_args, out_store)
    if unk_names:
        fun = fun.with_unknown_names()
    return fun, (lambda: out_store.val)


@_curry
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """A generator transformation (JAX's older form): ``gen(*gen_static_args, *args)``
    yields ``(args, kwargs)`` for the inner function, receives its result and yields the
    final one."""
    def gen2(f, *args, **kwargs):
        gen_inst = gen(*args, **kwargs)
        args_, kwargs_ = next(gen_inst)
        return gen_inst.send(f(*args_, **kwargs_))
    gen2.__name__ = _fun_name(gen)
    return fun.wrap(gen2, gen_static_args, None)


@_curry
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
    """``transformation`` whose generator yields ``(result, aux)`` last: returns the new
    ``WrappedFun`` and a thunk reading ``aux`` after a call."""
    def gen2(f, store, *args, **kwargs):
        gen_inst = gen(*args, **kwargs)
        args_, kwargs_ = next(gen_inst)
        ans, aux = gen_inst.send(f(*args_, **kwargs_))
        store.store(aux)
        return ans
    gen2.__name__ = _fun_name(gen)
    out_store = Store()
    return fun.wrap(gen2, gen_static_args, out_store), (lambda: out_store.val)


@transformation2
def hashable_partial(f, *args):
    return f(*args)


def merge_linear_aux(aux1, aux2):
    """Of two aux thunks exactly one of which was filled: ``(True, aux1())`` or
    ``(False, aux2())``; StoreException when neither or both were."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            out2 = aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
        return False, out2
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both stores occupied")


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
    return transformation_with_aux2(_flatten_fun)(f, in_tree)


def flatten_fun_nokwargs(f: WrappedFun, in_tree):
    """``f(*args)`` as a function of the leaves of ``args`` (``in_tree``)."""
    return transformation_with_aux2(_flatten_fun_nokwargs)(f, in_tree)


def _sourceinfo(fun) -> str:
    while isinstance(fun, partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"


__all__ = ["EqualStore", "Store", "StoreException", "WrappedFun", "annotate", "hashable_partial",
           "merge_linear_aux", "wrap_init", "transformation", "transformation2",
           "transformation_with_aux", "transformation_with_aux2", "flatten_fun",
           "flatten_fun_nokwargs"]
