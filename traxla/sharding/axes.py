"""``sharding.auto_axes``, ``sharding.explicit_axes`` and ``sharding.use_abstract_mesh``:
switching mesh axes between Explicit (sharding in the type) and Auto (left to the
partitioner) for part of a program, as JAX 0.10 does: the arguments are resharded onto
the mesh with the new axis types, the function runs with that mesh in context, and the
results are resharded back (``reshard`` equations at both ends, as JAX stages them)."""
from __future__ import annotations

import contextlib
import functools
import math

from traxla import tree_util
from traxla.ir.sharding import AxisType, PartitionSpec
from traxla.runtime.placement import Mesh, NamedSharding
from traxla.sharding import _mesh_stack, _push_mesh, _truncate_meshes, get_mesh, reshard
from traxla.tracer import Tracer


def _with_axis_types(mesh: Mesh, axes, axis_type) -> Mesh:
    names = mesh.axis_names if axes is None else ((axes,) if isinstance(axes, str)
                                                   else tuple(axes))
    for n in names:
        if n not in mesh.axis_names:
            raise ValueError(f"axis {n!r} is not an axis of the context mesh {mesh}")
    types = tuple(axis_type if n in names else t for n, t in zip(mesh.axis_names,
                                                                 mesh.axis_types))
    return Mesh(mesh.devices, mesh.axis_names, types), names


def _spec_of(x) -> PartitionSpec:
    """The spec in ``x``'s type (a traced value) or placement (an Array)."""
    sharding = getattr(getattr(x, "aval", None), "sharding_type", None)
    if sharding is not None:
        return PartitionSpec(*sharding.spec)
    placement = getattr(x, "_placement", None)
    return PartitionSpec(*placement.spec) if placement is not None else PartitionSpec()


def _explicit_only(spec, mesh: Mesh) -> PartitionSpec:
    """``spec`` with the axes that are not Explicit in ``mesh`` dropped (JAX's
    ``modify_spec_for_auto_manual``)."""
    return _without(spec, [n for n, t in zip(mesh.axis_names, mesh.axis_types)
                           if t is not AxisType.Explicit])


def _without(spec, axes) -> PartitionSpec:
    out = []
    for p in spec:
        names = () if p is None else (p if isinstance(p, tuple) else (p,))
        kept = tuple(n for n in names if n not in axes)
        out.append(None if not kept else kept[0] if len(kept) == 1 else kept)
    return PartitionSpec(*out)


@contextlib.contextmanager
def _in_context(mesh):
    depth = len(_mesh_stack)
    _push_mesh(mesh)
    try:
        yield mesh
    finally:
        _truncate_meshes(depth)


def _context_mesh(api: str) -> Mesh:
    mesh = get_mesh()
    if mesh is None:
        raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to enter "
                         f"into a mesh context when using `{api}` API.")
    return mesh


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """Runs ``f`` with the mesh axes ``axes`` (default: all) Auto: the arguments lose
    those axes from their types, and the results are resharded to ``out_sharding``."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        out_sharding_ = out_sharding
        if out_sharding_ is None:
            if "out_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'out_sharding'")
            out_sharding_ = kwargs.pop("out_sharding")
        outer = _context_mesh("auto_axes")
        inner, names = _with_axis_types(outer, axes, AxisType.Auto)
        with _in_context(inner):
            args = tree_util.tree_map(lambda a: _into_auto(a, inner), args)
            out = f(*args, **kwargs)
        return reshard(out, out_sharding_)
    return wrapped


def _into_auto(a, inner: Mesh):
    """``a`` typed over ``inner``, where some axes became Auto: a traced value loses them
    from its type; a concrete Array keeps its placement (as JAX's eager ``mesh_cast``, whose
    result XLA leaves where it is), only its type hides the Auto axes."""
    spec = _spec_of(a)
    if getattr(a, "_placement", None) is not None and not isinstance(a, Tracer):
        return reshard(a, NamedSharding(inner, spec))
    return reshard(a, NamedSharding(inner, _explicit_only(spec, inner)))


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """Runs ``f`` with the mesh axes ``axes`` (default: all) Explicit: the arguments are
    resharded to ``in_sharding`` (specs in their types), the results lose those axes."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        in_sharding_ = in_sharding
        if in_sharding_ is None:
            if "in_sharding" not in kwargs:
                raise TypeError("Missing required keyword argument: 'in_sharding'")
            in_sharding_ = kwargs.pop("in_sharding")
        outer = _context_mesh("explicit_axes")
        inner, names = _with_axis_types(outer, axes, AxisType.Explicit)
        with _in_context(inner):
            args = reshard(args, in_sharding_)
            out = f(*args, **kwargs)
        return tree_util.tree_map(
            lambda o: reshard(o, NamedSharding(outer, _explicit_only(_spec_of(o), outer))), out)
    return wrapped


class use_abstract_mesh:  # noqa: N801 -- a class, as JAX's
    """Traces with ``mesh``'s axis types: ``mesh`` (an AbstractMesh) must have the names
    and sizes of the context mesh, whose devices the program keeps. A context manager
    (a class, as JAX's)."""

    def __init__(self, mesh):
        self.mesh = mesh
        self._context = None

    def __enter__(self):
        self._context = _use_abstract_mesh(self.mesh)
        return self._context.__enter__()

    def __exit__(self, *exc):
        context, self._context = self._context, None
        return context.__exit__(*exc)


@contextlib.contextmanager
def _use_abstract_mesh(mesh):
    concrete = get_mesh()
    if concrete is not None and concrete.devices.size != math.prod(mesh.axis_sizes):
        raise ValueError(
            f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: {mesh} with "
            f"size={math.prod(mesh.axis_sizes)} and prev mesh: {concrete.abstract_mesh} with "
            f"size={concrete.devices.size}")
    if concrete is None:
        raise NotImplementedError(
            f"use_abstract_mesh({mesh}): traxla traces against the devices of the context mesh; "
            "enter `set_mesh` with a mesh of as many devices first.")
    # the context mesh's devices, in order, laid out as the new mesh's axes (JAX's concrete
    # mesh for an abstract mesh of the same size)
    with _in_context(Mesh(concrete.devices.reshape(tuple(mesh.axis_sizes)), mesh.axis_names,
                          mesh.axis_types)):
        yield mesh


__all__ = ["auto_axes", "explicit_axes", "use_abstract_mesh"]
