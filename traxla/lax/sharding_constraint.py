"""``with_sharding_constraint``: the hint that values inside a jitted program be laid out
with given shardings (eagerly, a ``device_put``)."""
from __future__ import annotations

from traxla import tree_util
from traxla.api import device_put
from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.ir.sharding import PartitionSpec
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
        named = to_named(s)
        if type(trace_core._state.trace) is EvalTrace:
            out.append(device_put(leaf, named))
            continue
        _concrete_meshes[named.mesh.abstract_mesh] = named.mesh
        out.append(sharding_constraint_p.bind(leaf, sharding=named, layout=None,
                                              context_mesh=context,
                                              unconstrained_dims=frozenset()))
    return tree_util.tree_unflatten(tree, out)


def _is_spec_like(s):
    return isinstance(s, PartitionSpec) or type(s).__name__ == "NamedSharding"
