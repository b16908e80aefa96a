"""``sharding_constraint``: ``lax.with_sharding_constraint``'s hint that a value be laid
out as a NamedSharding inside a program partitioned by XLA (the type is unchanged)."""
from __future__ import annotations

from traxla.ir.primitive import Primitive, def_typing

sharding_constraint_p = Primitive("sharding_constraint")


def _sharding_constraint_rule(x, *, sharding, layout, context_mesh, unconstrained_dims):
    spec = tuple(sharding.spec)
    if len(spec) > len(x.shape):
        raise ValueError(f"One of with_sharding_constraint arguments was given the sharding "
                         f"{sharding}, which implies that it has a rank of at least {len(spec)}, "
                         f"but it has rank {len(x.shape)}")
    return x


def_typing(sharding_constraint_p, _sharding_constraint_rule)
