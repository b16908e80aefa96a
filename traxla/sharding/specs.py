"""Partition specs of ``shard_map``: spreading ``in_specs``/``out_specs`` over the leaves
of a pytree, and JAX's check (``check_vma``) of the out_specs against the outputs' types."""
from __future__ import annotations

from traxla import tree_util
from traxla.ir.sharding import PartitionSpec


class HiPspec:
    """The partition spec of a high-level (hijax) type (``jax.experimental.hijax``): a
    subclass says, in ``to_lo``, the ``PartitionSpec`` of each of the type's ``lo_ty``
    values (see ``traxla/sharding/hi_shard_map.py``)."""

    def to_lo(self):
        raise NotImplementedError(f"{type(self).__name__} must define to_lo")

    def to_tangent_spec(self):
        raise NotImplementedError(f"{type(self).__name__} must define to_tangent_spec")

    def to_ct_spec(self):
        raise NotImplementedError(f"{type(self).__name__} must define to_ct_spec")


def _is_spec(x):
    return x is None or isinstance(x, (PartitionSpec, HiPspec))


def _broadcast_specs(specs, tree, what):
    """One spec per leaf: ``specs`` is a spec (for all leaves) or a tree prefix of specs."""
    if _is_spec(specs):
        return [PartitionSpec() if specs is None else specs] * tree.num_leaves
    proxy = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    out = []

    def walk(s, sub):
        if _is_spec(s):
            out.extend([PartitionSpec() if s is None else s] * len(tree_util.tree_leaves(sub)))
            return
        s_children = tree_util.flatten_one_level(s)[0]
        sub_children = tree_util.flatten_one_level(sub)[0]
        s_children, sub_children = list(s_children), list(sub_children)
        if len(s_children) != len(sub_children):
            raise ValueError(f"shard_map {what} {specs} do not match the structure {tree}")
        for a, b in zip(s_children, sub_children):
            walk(a, b)
    walk(specs, proxy)
    return out


def _spec_vma(mesh, spec):
    """The manual axes an argument split by ``spec`` varies over, in mesh order."""
    named = set(spec.axes()) if isinstance(spec, PartitionSpec) else set()
    return tuple(n for n in mesh.axis_names if n in named)


def check_out_vma(f, mesh, out_specs, flat_specs, out_avals):
    """JAX's check of ``out_specs`` (check_vma): an output must vary only over the mesh
    axes its spec splits it over; one the spec replicates it over must not vary."""
    msgs = []
    for i, (spec, aval) in enumerate(zip(flat_specs, out_avals)):
        named = set(spec.axes())
        if not set(aval.vma) - named:
            continue
        key = "" if _is_spec(out_specs) else f"[{i}]"
        unmentioned = [n for n in mesh.axis_names if n not in named]
        if len(unmentioned) > 1:
            need = ",".join(n for n in mesh.axis_names if n in named)
            got = ",".join(n for n in mesh.axis_names if n in aval.vma)
            diff = ",".join(n for n in unmentioned if n in aval.vma)
            msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding output "
                        f"value is only varying across mesh axes {{{need}}} and not {{{diff}}}, "
                        f"but it was inferred to be possibly varying over {{{got}}}")
        else:
            msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding output "
                        f"value is replicated across mesh axis '{unmentioned[0]}', but could not "
                        "infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    name = getattr(f, "__name__", str(f))
    raise ValueError(
        f"shard_map applied to the function '{name}' was given out_specs which require "
        "replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
