"""How ``jit`` places a program on a mesh: the mesh a program's ``shard_map`` or sharding
constraint names, the Shardy annotations of ``@main``, ``in_shardings`` broadcast to the
argument leaves, and the placement an argument brings."""
from __future__ import annotations

from traxla import tree_util
from traxla.api.shape_dtype_struct import ShapeDtypeStruct
from traxla.base.tree_functions import _prefix_error
from traxla.ir.avals import physical_aval
from traxla.ir.jaxpr import subjaxprs
from traxla.ir.rules.collectives import reshard_p, shard_map_p
from traxla.ir.rules.sharding_constraint import sharding_constraint_p
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.lowering import ModuleShardings
from traxla.runtime.backend import get_backend
from traxla.runtime.placement import HloPlacement, Mesh, NamedSharding, get_mesh
from traxla.sharding import to_named
from traxla.sharding.shard_map import concrete_mesh

def _mesh_of_program(jaxpr):
    """The mesh of a shard_map anywhere in ``jaxpr`` (None when there is none)."""
    if not AbstractMesh.ever_created:  # no mesh in this process: no equation can carry one
        return None
    for eqn in jaxpr.eqns:
        if eqn.primitive is sharding_constraint_p and eqn.params["sharding"].mesh.size > 1:
            return eqn.params["sharding"].mesh
        if eqn.primitive is shard_map_p or eqn.primitive is reshard_p:
            mesh = eqn.params["mesh"] if eqn.primitive is shard_map_p else eqn.params["dst_spec"][0]
            return concrete_mesh(mesh)
        for sub in subjaxprs(eqn.params):
            mesh = _mesh_of_program(sub)
            if mesh is not None:
                return mesh
    return None


def _module_shardings(closed, mesh, placements, out_specs=None):
    """Shardy annotations of ``@main``: inputs as placed, results as their types promise
    (results with no explicit sharding are left to the partitioner)."""

    def padded(spec, aval):  # a key array's trailing key-data dimensions are replicated
        out = tuple(spec) + (None,) * (len(physical_aval(aval).shape) - len(spec))
        return spec.update(partitions=out) if getattr(spec, "unreduced", None) else out

    def spec_of(aval):
        st = aval.sharding_type
        return None if st is None else padded(st.spec, aval)
    out_avals = closed.out_avals
    return ModuleShardings(
        list(zip(mesh.axis_names, mesh.devices.shape)),
        [padded(p.full_spec(len(a.shape)), a) for p, a in zip(placements, closed.in_avals)],
        [spec_of(a) if out_specs is None or out_specs[i] is None else padded(out_specs[i], a)
         for i, a in enumerate(out_avals)],
        [None if p.memory_kind == "device" else p.memory_kind for p in placements],
        [None if a.memory_space is None else "pinned_host" for a in out_avals],
        [_other_mesh(a, mesh) if out_specs is None or out_specs[i] is None else None
         for i, a in enumerate(out_avals)])


def _other_mesh(aval, mesh):
    """The mesh of ``aval``'s type when its axes are not the program's (``use_abstract_mesh``
    onto other axis names), else None."""
    st = aval.sharding_type
    if st is None or tuple(st.mesh.axis_names) == tuple(mesh.axis_names):
        return None
    return st.mesh


def broadcast_prefix_leaves(prefix, treedef, what: str) -> list:
    """The shardings of ``prefix`` (one sharding or spec for every argument, or a tuple
    with a pytree prefix per positional argument; None: unspecified) per leaf of
    ``treedef`` (the positional arguments)."""

    def is_one(x):
        return x is None or isinstance(x, PartitionSpec) or not isinstance(x, (tuple, list,
                                                                                dict))
    if is_one(prefix):
        return [prefix] * treedef.num_leaves
    full = tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves)
    prefix = tuple(prefix) if isinstance(prefix, list) else prefix
    try:
        return tree_util.broadcast_prefix(
            prefix, full, is_leaf=lambda x: x is None or isinstance(x, PartitionSpec))
    except ValueError as e:
        raise ValueError(f"{what} must be a prefix of the positional arguments: {e}") from None


def flatten_axis_resources(what: str, treedef, shardings) -> list:
    """``shardings`` (specs, as a pytree prefix of the positional arguments ``treedef``: a
    tuple of them) per leaf, with JAX's errors (``flatten_axis_resources`` with tupled
    arguments)."""
    is_leaf = lambda x: x is None or isinstance(x, PartitionSpec)  # noqa: E731
    full = tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves)
    try:
        return tree_util.broadcast_prefix(shardings, full, is_leaf=is_leaf)
    except ValueError:
        pass
    children = treedef.children()
    if type(shardings) is not tuple or len(shardings) != len(children):
        msg = (f"{what} specification must be a tree prefix of the positional arguments "
               f"tuple. In particular, {what} must either be a Sharding, a PartitionSpec, or "
               "a tuple of length equal to the number of positional arguments.")
        if type(shardings) is not tuple:
            msg += f" But {what} is not a tuple: got {type(shardings)} instead."
        else:
            msg += (f" But {what} is the wrong length: got a tuple or list of length "
                    f"{len(shardings)} for an args tuple of length {len(children)}.")
        if len(children) == 1:
            try:
                tree_util.broadcast_prefix((shardings,), full, is_leaf=is_leaf)
            except ValueError:
                pass
            else:
                msg += (f" Given the corresponding argument being passed, it looks like "
                        f"{what} might need to be wrapped in a singleton tuple.")
        raise ValueError(msg)
    errors = list(_prefix_error((), shardings, full, is_leaf))
    details = "\n".join(e(what).args[0] for e in errors)
    raise ValueError(f"Mismatch details ({len(errors)} found):\n{details}")


def _placement_of(x):
    """The NamedSharding an argument brings (a placed Array, a sharded struct), or None."""
    p = getattr(x, "_placement", None)
    if p is not None:
        return p
    if isinstance(x, ShapeDtypeStruct) and x._sharding is not None:
        s = x.sharding
        if isinstance(s, NamedSharding) and isinstance(s.mesh, AbstractMesh):
            s = to_named(s)  # the context's mesh of that shape, if any: devices to place on
        return s if isinstance(s, NamedSharding) and not isinstance(s.mesh, AbstractMesh) \
            else None
    return None


def _device_ids(devices) -> str:
    devices = list(devices)
    return (f"with device ids {[d.id for d in devices]} on platform "
            f"{devices[0].platform.upper()}")


def check_devices(arrays, names, fun_name):
    """JAX's ValueError when committed arguments sit on different devices, or on other
    devices than the concrete mesh of ``set_mesh`` (``names``: a callable giving the
    argument leaves' names, asked only for the error)."""
    context = get_mesh()
    context = tuple(context.device_list) if isinstance(context, Mesh) else None
    first = None
    for i, a in enumerate(arrays):
        p = a._placement
        if p is None or not p.committed:
            continue
        devices = _devices_of(a)
        if context is not None and devices != context:
            raise ValueError(_mismatch(fun_name, names(), arrays, i, devices) +
                             f" and jit's context mesh {_device_ids(context)}")
        if first is None:
            first = (i, devices)
        elif context is None and devices != first[1]:
            j, first_devices = first
            raise ValueError(_mismatch(fun_name, names(), arrays, j, first_devices) + " and "
                             + _mismatch(fun_name, names(), arrays, i, devices, ""))


def _devices_of(array) -> tuple:
    p = array._placement
    if p is None:
        return (get_backend().devices[0],)
    return tuple(p.devices) if isinstance(p, HloPlacement) else p._device_assignment


def _mismatch(fun_name, names, arrays, i, devices, prefix="Received incompatible devices for "
              "jitted computation. Got "):
    # (JAX names the first argument on those devices, committed or not)
    i = next(k for k, a in enumerate(arrays) if _devices_of(a) == devices)
    name = names[i] if i < len(names) else ""
    return (f"{prefix}argument {name} of {fun_name} with shape "
            f"{arrays[i].aval.str_short(False)} and {_device_ids(devices)}")
