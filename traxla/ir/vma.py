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


# -- unreduced and reduced manual values (JAX's ManualAxisType.unreduced/.reduced) -------------
# Inside a shard_map body a value may be unreduced over manual axes (each instance holds a
# partial sum) or reduced (the same value, with unreduced cotangents). The type keeps them
# in its sharding: a spec of Nones over the body's mesh with every axis Manual, unreduced
# or reduced over those axes (printed ``f32[4]{U:i}``); JAX's ur rules then type the body's
# operations as they do outside.

def manual_ur(aval):
    """``(unreduced, reduced)`` manual axes of a value in a shard_map body."""
    st = getattr(aval, "sharding_type", None)
    if st is None:
        return frozenset(), frozenset()
    return st.spec.unreduced, st.spec.reduced


def manual_mesh():
    """The mesh of the innermost shard_map body, its axes all Manual."""
    from traxla.ir.sharding import AxisType
    for frame in reversed(axis_env):
        if isinstance(frame, AbstractMesh):
            return frame.update(axis_types=(AxisType.Manual,) * len(frame.axis_names))
    raise ValueError("unreduced and reduced manual values exist only inside a shard_map")


def with_manual_ur(aval, unreduced, reduced, vma=None, mesh=None):
    """``aval`` unreduced and reduced over these manual axes (and varying over ``vma``)."""
    from traxla.ir.sharding import PartitionSpec, ShardingType
    sharding = None
    if unreduced or reduced:
        mesh = mesh or manual_mesh()
        sharding = ShardingType(mesh, PartitionSpec(*(None,) * len(aval.shape),
                                                    unreduced=frozenset(unreduced),
                                                    reduced=frozenset(reduced)))
    return aval.update(sharding=sharding, vma=aval.vma if vma is None else ordered(vma))


vary_unreduced_cast_p = Primitive("vary_unreduced_cast_p")  # (JAX's name, printed so)
reduced_vary_cast_p = Primitive("reduced_vary_cast_p")
preduced_p = Primitive("preduced")


def _vary_unreduced_cast_rule(x, *, axes):
    u, r = manual_ur(x)
    if not x.vma:
        raise ValueError(f"vary_unreduced_cast only accepts inputs that are varying. Got "
                         f"{x.str_short()}")
    if not set(x.vma) & set(axes):
        raise ValueError(
            "vary_unreduced_cast is a Varying->Unreduced collective. This means that the axis "
            "names mentioned in `axes` passed to `vary_unreduced_cast` must be present in "
            f"`jax.typeof(x).mat.varying`. Got axes={axes} and "
            f"jax.typeof(x).mat.varying={frozenset(x.vma)}")
    if u & set(axes):
        raise ValueError("vary_unreduced_cast input cannot be unreduced across the axis_name "
                         f"provided. Got x={x.str_short()} and axis_name={axes}")
    return with_manual_ur(x, u | frozenset(axes), r, [a for a in x.vma if a not in axes])


def _reduced_vary_cast_rule(x, *, axes):
    u, r = manual_ur(x)
    if not r:
        raise ValueError(f"reduced_vary_cast only accepts inputs that are reduced. Got "
                         f"{x.str_short()}")
    if not r & set(axes):
        raise ValueError(
            "reduced_vary_cast is a Reduced->Varying collective. This means that the axis names "
            "mentioned in `axes` passed to `reduced_vary_cast` must be present in "
            f"`jax.typeof(x).mat.reduced`. Got axes={axes} and jax.typeof(x).mat.reduced={r}")
    if set(x.vma) & set(axes):
        raise ValueError("reduced_vary_cast input cannot be varying across the axis_name "
                         f"provided. Got x={x.str_short()} and axis_name={axes}")
    return with_manual_ur(x, u, r - frozenset(axes), set(x.vma) | set(axes))


def _preduced_rule(x, *, axes):
    u, r = manual_ur(x)
    if set(x.vma) & set(axes):
        raise ValueError(
            "preduced is a Invariant->Reduced collective. This means that the axis names "
            "mentioned in `axes` passed to `preduced` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={axes} and "
            f"jax.typeof(inp).mat.varying={frozenset(x.vma)}")
    if r & set(axes):
        raise ValueError("preduced input cannot be reduced across the axis_name provided. Got "
                         f"x={x.str_short()} and axis_name={axes}")
    return with_manual_ur(x, u, r | frozenset(axes))


for _prim, _rule in ((vary_unreduced_cast_p, _vary_unreduced_cast_rule),
                     (reduced_vary_cast_p, _reduced_vary_cast_rule),
                     (preduced_p, _preduced_rule)):
    def_typing(_prim, _rule)
    # (their typing rule gives the varying axes: the result is as typed)
    vma_rules[_prim] = (lambda rule: lambda in_avals, **params: rule(in_avals[0], **params).vma)(_rule)
