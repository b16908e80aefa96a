"""``traxla.extend.linear_util``: wrapped functions (``jax.extend.linear_util``).

``wrap_init(f)`` makes a ``WrappedFun``; ``transformation`` / ``transformation_with_aux``
(generators: they yield the inner call's ``(args, kwargs)``, receive its result and yield the
final one, with the aux value beside it) and ``transformation2`` /
``transformation_with_aux2`` (plain functions taking the inner function first) stack
transformations on it, innermost first; ``cache`` memoizes a function of a ``WrappedFun``
on its transformations, params and the trace context."""
from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable

from traxla.ir.jaxpr import DebugInfo
from traxla.tracer import linear_util as _lu
from traxla.tracer.linear_util import (EqualStore, Store, StoreException,  # noqa: F401
                                       WrappedFun, annotate, hashable_partial,
                                       merge_linear_aux, transformation, transformation2,
                                       transformation_with_aux, transformation_with_aux2)


def _missing_debug_info(for_what: str) -> DebugInfo:
    warnings.warn(
        f"{for_what} is missing a DebugInfo object. This behavior is deprecated, use "
        "api_util.debug_info() to construct a proper DebugInfo object and propagate it to "
        "this function. See https://github.com/jax-ml/jax/issues/26480 for more details.",
        DeprecationWarning, stacklevel=3)
    return DebugInfo("missing_debug_info", "<missing_debug_info>", "<missing_debug_info>",
                     None)


def wrap_init(f: Callable, params=None, *, debug_info=None) -> WrappedFun:
    """``f`` as a ``WrappedFun`` (a DeprecationWarning without ``debug_info``, as JAX's)."""
    debug_info = debug_info or _missing_debug_info("linear_util.wrap_init")
    return _lu.wrap_init(f, params, debug_info=debug_info)


def cache(call: Callable, *, explain: Callable | None = None):
    """Memoizes ``call(fun: WrappedFun, *args)`` on ``fun``'s function (weakly), its
    transformations, params and input type, ``args`` and the trace context (x64 and the
    other flags that change a trace). A hit copies the stored aux values into ``fun``'s
    stores, as the call would have filled them. ``explain(fun, first_use, cache, key,
    elapsed)`` is called on a miss when ``config.explain_cache_misses`` is set."""
    import time

    from traxla import config
    from traxla.api.jit_caches import _trace_context

    fun_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized_fun(fun: WrappedFun, *args):
        table = fun_caches.setdefault(fun.f, new_table := {})
        key = (fun.transforms, fun.params, fun.in_type, args, _trace_context())
        result = table.get(key, None)
        if result is not None:
            ans, stores = result
            fun.populate_stores(stores)
            return ans
        do_explain = explain is not None and config.read("explain_cache_misses")
        start = time.time() if do_explain else 0.0
        ans = call(fun, *args)
        if do_explain:
            explain(fun, table is new_table, table, key, time.time() - start)
        table[key] = (ans, fun.stores)
        return ans

    memoized_fun.evict_function = lambda f: fun_caches.pop(f, None)
    memoized_fun.cache_clear = fun_caches.clear
    return memoized_fun


__all__ = ["Store", "StoreException", "WrappedFun", "cache", "merge_linear_aux",
           "transformation", "transformation2", "transformation_with_aux",
           "transformation_with_aux2", "wrap_init"]
