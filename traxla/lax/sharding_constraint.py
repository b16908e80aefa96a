"""``with_sharding_constraint``: the hint that values inside a jitted program be laid out
with given shardings (eagerly, a ``device_put``)."""
from __future__ import annotations

from traxla import tree_util
from traxla.api import device_put
from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.primitives import aval_of
from traxla.sharding import get_mesh, to_named
from traxla.sharding.shard_map import _concrete_meshes
from traxla.tracer import EvalTrace, traces as trace_core


class _NoMesh:
    """The context mesh when none is set (prints as JAX's empty ``Mesh()``)."""

    def __repr__(self):
        return "Mesh()"

    def __eq__(self, other):
        return isinstance(other, _NoMesh)

    def __hash__(self):
        return hash(_NoMesh)


def with_sharding_constraint(x, shardings):
    """``x`` (a pytree) constrained to ``shardings`` (NamedShardings, or PartitionSpecs on
    the mesh set with ``set_mesh``) inside a jitted program; eagerly, a ``device_put``."""
    leaves, tree = tree_util.tree_flatten(x)
    if isinstance(shardings, (list, tuple)) and not _is_spec_like(shardings):
        shardings = tree_util.tree_leaves(shardings, is_leaf=_is_spec_like)
        if len(shardings) != len(leaves):
            raise ValueError(f"with_sharding_constraint got {len(shardings)} shardings for "
                             f"{len(leaves)} arrays.")
    else:
        shardings = [shardings] * len(leaves)
    context = get_mesh() or _NoMesh()
    out = []
    for leaf, s in zip(leaves, shardings):
        if type(s).__name__ == "Format":  # a layout with a sharding: traxla keeps the
            s = s.sharding                # default layouts (docs/jax_dropin.md)
        named = to_named(s)
        if type(trace_core._state.trace) is EvalTrace:
            if isinstance(named.mesh, AbstractMesh):  # no mesh of that shape in the context
                placed = getattr(leaf, "sharding", None)
                raise TypeError(
                    "The sharding on the input must be a `NamedSharding` since the target "
                    "sharding has an `AbstractMesh` in it. Got sharding type <class "
                    f"'jax.sharding.{type(placed).__name__}'> for shape "
                    f"{aval_of(leaf).str_short(short_dtypes=False)}")
            out.append(device_put(leaf, named))
            continue
        _concrete_meshes[named.mesh.abstract_mesh] = named.mesh
        out.append(sharding_constraint_p.bind(leaf, sharding=named, layout=None,
                                              context_mesh=context,
                                              unconstrained_dims=frozenset()))
    return tree_util.tree_unflatten(tree, out)


def _is_spec_like(s):
    return isinstance(s, PartitionSpec) or type(s).__name__ in ("NamedSharding", "Format")
