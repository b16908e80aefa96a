"""More collectives for ``shard_map`` (issue #12): ``all_to_all``, ``pswapaxes`` (an
all_to_all), ``pshuffle`` (a ppermute given by sources) and ``axis_size``."""
from __future__ import annotations

from traxla import tree_util
from traxla.ir.rules.all_to_all import all_to_all_p
from traxla.lax.parallel import axis_size, ppermute


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Materializes the mapped axis ``axis_name`` at ``concat_axis`` and maps ``split_axis``
    instead (``tiled``: the chunks stay concatenated along the existing axes)."""
    if axis_index_groups is not None:
        raise NotImplementedError("all_to_all: axis_index_groups is not supported by traxla "
                                  "(shard_map over a sub-mesh expresses the same groups).")
    size = axis_size(axis_name)

    def bind(x, split_axis=split_axis, concat_axis=concat_axis):
        from traxla.lax import expand_dims, shape_of, squeeze
        shape = shape_of(x)
        if tiled:
            if shape[split_axis] % size != 0:
                raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has "
                                 f"to be divisible by the size of the named axis {axis_name} "
                                 f"({size})")
        else:
            if size != shape[split_axis]:
                raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                                 "equal x.shape[split_axis], but they are "
                                 f"{size} and {shape[split_axis]} respectively.")
            if split_axis < concat_axis:
                concat_axis += 1
                x = expand_dims(x, (concat_axis,))
            elif split_axis > concat_axis:
                x = expand_dims(x, (concat_axis,))
                split_axis += 1
        result = all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                   axis_name=axis_name, axis_index_groups=None, tiled=tiled,
                                   axis_size=size)
        if not tiled and split_axis != concat_axis:
            result = squeeze(result, (split_axis,))
        return result

    return tree_util.tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the mapped axis ``axis_name`` with the unmapped ``axis``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pshuffle(x, axis_name, perm):
    """``ppermute`` where the output at axis index i comes from input index ``perm[i]``."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


__all__ = ["all_to_all", "pswapaxes", "pshuffle", "axis_size"]


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
    from traxla.ir.rules.sharding_constraint import sharding_constraint_p
    from traxla.sharding import get_mesh, to_named
    from traxla.tracer import EvalTrace
    from traxla.tracer import traces as trace_core
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
            from traxla.api import device_put
            out.append(device_put(leaf, named))
            continue
        from traxla.sharding.shard_map import _concrete_meshes
        _concrete_meshes[named.mesh.abstract_mesh] = named.mesh
        out.append(sharding_constraint_p.bind(leaf, sharding=named, layout=None,
                                              context_mesh=context,
                                              unconstrained_dims=frozenset()))
    return tree_util.tree_unflatten(tree, out)


def _is_spec_like(s):
    from traxla.ir.sharding import PartitionSpec
    return isinstance(s, PartitionSpec) or type(s).__name__ == "NamedSharding"
