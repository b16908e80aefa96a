"""Varying manual axes (JAX's ``check_vma``): inside a ``shard_map`` body, each value's type
says over which manual mesh axes it may differ from device to device (``f32[3]{V:i}``).

Arguments split over an axis vary over it; a primitive's result varies over the axes any
operand varies over, except for the collectives, which have their own rules (``psum``
over ``i`` gives a value that no longer varies over ``i``; ``axis_index('i')`` varies over
``i``); a primitive that takes jaxprs (``scan``, ``cond``, ``jit``...) gets its results'
axes from its body. While a body with ``check_vma`` is traced, operands that vary over
fewer axes than the others of their equation are first cast with ``pvary`` (as JAX does,
so the jaxpr is typed as JAX's is), and ``shard_map`` checks its out_specs against them.
"""
from __future__ import annotations

from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.primitive import Primitive, def_typing
from traxla.ir.sharding import AbstractMesh
from traxla.ir.thread_state import axis_env

# how many shard_map bodies with check_vma are being traced (innermost on top)
active = [0]
# primitive -> rule(in_avals, **params) -> the result's axes (a list of them for several)
vma_rules: dict = {}

pvary_p = Primitive("pvary")


def _mesh_order():
    for frame in reversed(axis_env):
        if isinstance(frame, AbstractMesh):
            return frame.axis_names
    return None


def ordered(axes) -> tuple:
    """``axes`` (any iterable of mesh axis names) in the order of the current mesh."""
    axes = set(axes)
    if not axes:
        return ()
    order = _mesh_order() or ()
    return tuple(n for n in order if n in axes) + tuple(sorted(axes - set(order)))


def manual_axes_of(names) -> tuple:
    """Those of ``names`` that are axes of the current mesh (not vmap's named axes)."""
    order = _mesh_order() or ()
    return tuple(n for n in names if n in order)


def _takes_jaxprs(params) -> bool:
    for v in params.values():
        if isinstance(v, (ClosedJaxpr, Jaxpr)):
            return True
        if type(v) in (tuple, list) and v and isinstance(v[0], (ClosedJaxpr, Jaxpr)):
            return True
    return False


def with_vma(prim, in_avals, out, params):
    """``out`` (one aval, or a list for several results) with its varying axes."""
    rule = vma_rules.get(prim)
    if rule is None:
        if _takes_jaxprs(params):
            return out  # the body's types already say
        axes = set()
        for a in in_avals:
            axes.update(a.vma)
        vma = ordered(axes)
        if prim.multiple_results:
            return [o.update(vma=vma) for o in out]
        return out.update(vma=vma)
    vma = rule(in_avals, **params)
    if prim.multiple_results:
        return [o.update(vma=v) for o, v in zip(out, vma)]
    return out.update(vma=vma)


def needs_matching(prim, params) -> bool:
    """Whether ``prim``'s operands must vary over the same axes (all but the collectives
    and the primitives that take jaxprs)."""
    return prim not in vma_rules and not _takes_jaxprs(params)


def _pvary_rule(x, *, axes):
    return x.update(vma=ordered(set(x.vma) | set(axes)))


def_typing(pvary_p, _pvary_rule)
vma_rules[pvary_p] = lambda in_avals, *, axes: ordered(set(in_avals[0].vma) | set(axes))
