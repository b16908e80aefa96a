"""Lowering ``sharding_constraint`` to ``sdy.sharding_constraint`` on the sharding's mesh."""
from __future__ import annotations

from traxla.ir.avals import physical_aval
from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.lowering.mlir import sdy
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules.collectives import _sharding_attr


def _sharding_constraint(ctx, x, *, sharding, layout, context_mesh, unconstrained_dims):
    if sharding.mesh.size == 1:
        return x
    name = ctx.module.ensure_mesh(sharding.mesh.abstract_mesh)
    # over the stored rank (as JAX's physical aval): a key's trailing dims stay whole
    ndim = physical_aval(ctx.aval_out).ndim
    spec = sharding.full_spec(len(ctx.aval_out.shape))
    return sdy.ShardingConstraintOp(x, _sharding_attr(spec, ndim, unconstrained_dims,
                                                      mesh=sharding.mesh, name=name)).result


register_lowering(sharding_constraint_p, _sharding_constraint)


def lower_with_sharding_in_types(ctx, op, aval):
    """``op`` constrained to the sharding in ``aval``'s type (JAX's: a lowering rule that
    builds its result itself annotates it so); unchanged when the type names no Explicit
    mesh axis or the mesh is one device."""
    st = getattr(aval, "sharding_type", None)
    if st is None or st.mesh.size == 1:
        return op
    name = ctx.module.ensure_mesh(st.mesh)
    return sdy.ShardingConstraintOp(op, _sharding_attr(st.spec, physical_aval(aval).ndim,
                                                       mesh=st.mesh, name=name)).result
