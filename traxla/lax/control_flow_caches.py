"""Caches of what control flow derives from a traced body, as JAX's ``weakref_lru_cache``s:
the jaxprs pruned, reordered or merged from cached traces (``prune_closed_jaxpr_outputs``,
``move_binders_to_front``, the branches' common constants) and ``fori_loop``'s wrappers of
a body function (``_fori_scan_body_fun``, ``_fori_body_fun``). Run eagerly again with the
same functions and types, a loop or cond then binds the very same jaxpr, so its compiled
program is reused (JAX compiles it once; without these, every eager call compiled again)."""
from __future__ import annotations

import weakref

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.runtime.cache import on_clear

_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # jaxpr -> {key: jaxpr}
_fori_wrappers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # body -> {kind: fn}
on_clear(_derived.clear)
on_clear(_fori_wrappers.clear)


def _cached(cache, key1, key2, make):
    try:
        per_key = cache.setdefault(key1, {})
    except TypeError:  # not weakly referenceable or not hashable: not cached
        return make()
    return per_key[key2] if key2 in per_key else per_key.setdefault(key2, make())


def prune_outputs(closed: ClosedJaxpr, keep) -> ClosedJaxpr:
    """``closed`` with only the outputs ``keep`` marks."""
    def make():
        j = closed.jaxpr
        outvars = [v for v, k in zip(j.outvars, keep) if k]
        return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns, j.debug_info),
                           closed.consts)
    return _cached(_derived, closed, ("prune", tuple(map(bool, keep))), make)


def move_binders_to_front(closed: ClosedJaxpr, to_move) -> ClosedJaxpr:
    """``closed`` with the inputs ``to_move`` marks first."""
    def make():
        j = closed.jaxpr
        invars = ([v for v, m in zip(j.invars, to_move) if m]
                  + [v for v, m in zip(j.invars, to_move) if not m])
        return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns, j.debug_info),
                           closed.consts)
    return _cached(_derived, closed, ("move", tuple(map(bool, to_move))), make)


def merged_branches(jaxprs, const_pattern, make) -> tuple:
    """``make()``'s branches merged over their common constants, once per traced branches
    and pattern of shared constants (JAX's padded-constvars cache)."""
    return _cached(_derived, jaxprs[0], ("merge", tuple(jaxprs[1:]), const_pattern), make)


def fori_scan_body(body_fun):
    """``fori_loop``'s scan body for ``body_fun``: one function per body function (it
    holds the body weakly, so that the cache never keeps the body alive)."""
    def make():
        body_ref = weakref.ref(body_fun)

        def scanned_fun(loop_carry, _):
            i, x = loop_carry
            return (i + 1, body_ref()(i, x)), None
        return scanned_fun
    return _cached(_fori_wrappers, body_fun, "scan", make)


def fori_while_body(body_fun, add_one):
    """``fori_loop``'s while body for ``body_fun`` (``add_one(i)``: ``i + 1`` in ``i``'s
    dtype), one per body function."""
    def make():
        body_ref = weakref.ref(body_fun)

        def while_body_fun(loop_carry):
            i, hi, x = loop_carry
            return add_one(i), hi, body_ref()(i, x)
        return while_body_fun
    return _cached(_fori_wrappers, body_fun, ("while", add_one), make)
