"""``with_sharding_constraint``: the hint that values inside a jitted program be laid out
with given shardings (eagerly, a ``device_put``)."""
from __future__ import annotations

from traxla import tree_util
from traxla.api import device_put
from traxla.base.tree_functions import _prefix_error
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
    if _is_spec_like(shardings):
        shardings = [shardings] * len(leaves)
    else:  # a pytree prefix of the value's structure (as JAX's)
        try:
            shardings = tree_util.broadcast_prefix(shardings, x, is_leaf=_is_spec_like)
        except ValueError:
            name = "with_sharding_constraint shardings"
            errors = list(_prefix_error((), shardings, x, _is_spec_like))
            if not errors:
                raise
            details = "\n  ".join(e(name).args[0] for e in errors)
            raise ValueError(f"{name} specification must be a tree prefix of the "
                             f"corresponding value; \n  Mismatch details ({len(errors)} "
                             f"found):\n  {details}") from None
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
            if PartitionSpec.UNCONSTRAINED in named.spec:  # eagerly: left whole
                spec = [None if p is PartitionSpec.UNCONSTRAINED else p for p in named.spec]
                while spec and spec[-1] is None:  # as the compiled constraint's output
                    spec.pop()
                named = named.update(spec=PartitionSpec(*spec))
            out.append(device_put(leaf, named))
            continue
        _concrete_meshes[named.mesh.abstract_mesh] = named.mesh
        out.append(sharding_constraint_p.bind(leaf, sharding=named, layout=None,
                                              context_mesh=context,
                                              unconstrained_dims=frozenset(
                                                  i for i, p in enumerate(named.spec)
                                                  if p is PartitionSpec.UNCONSTRAINED)))
    return tree_util.tree_unflatten(tree, out)


def _is_spec_like(s):
    return isinstance(s, PartitionSpec) or type(s).__name__ in ("NamedSharding", "Format")
