"""``shard_map``: run a function on each device's block of its arguments, with the
mesh axes Manual inside, so that collectives (``lax.psum``...) say how blocks talk."""
from __future__ import annotations


from traxla.base.wrapping import wraps
from traxla import tree_util
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.collectives import (shard_map_meshes, shard_map_p, shard_map_shown_meshes,
                                        spec_factor)
from traxla.ir.avals import ShapedArray
from traxla.ir.sharding import AxisType, PartitionSpec
from traxla.ir.thread_state import axis_env
from traxla.ir.vma import active as vma_active, with_manual_ur
from traxla.ir.traceback_util import api_boundary
from traxla.primitives import aval_of
from traxla.tracer import EvalTrace, Tracer, make_debug_info, trace_to_jaxpr, traces as trace_core
from traxla.sharding import get_mesh
import traxla.api as _api
from traxla.runtime.placement import NamedSharding
from traxla.sharding import hi_shard_map
from traxla.sharding.shard_map_eager import run_eager
from traxla.sharding.specs import _broadcast_specs, _is_spec, _spec_vma, check_out_vma


_concrete_meshes = shard_map_meshes  # abstract mesh -> the concrete one it was made from


def concrete_mesh(abstract):
    """The device mesh a shard_map over ``abstract`` was created with."""
    return _concrete_meshes[abstract]


class _InferFromArgs:
    """``in_specs`` left to the arguments: each placed Array brings its own spec."""

    def __repr__(self):
        return "Infer"


Infer = _InferFromArgs()


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
    """``f`` applied per device block: arguments split by ``in_specs``, results
    reassembled by ``out_specs`` (a dim not named in an out spec must be replicated).
    As JAX 0.10's: without ``f`` a decorator factory; without ``mesh``, the mesh set by
    ``set_mesh``; without ``in_specs``, the specs of the (placed) arguments."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f} of "
                        f"type {type(f)}.")
    return _shard_map(f, mesh, in_specs, out_specs, check_vma, axis_names)


def _axes_to_pspec(axis_name, axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """Single-axis ``shard_map`` (JAX 0.10's ``jax.smap``): ``f`` manual over the context
    mesh's axis ``axis_name`` only, each argument split along its axis in ``in_axes`` (an
    int, None for unsplit, or a tuple per argument) and results joined along ``out_axes``."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                        "entries corresponding to the positional arguments passed to the "
                        f"function, but got {in_axes}.")
    if in_axes is not Infer and not all(isinstance(a, int)
                                        for a in tree_util.tree_leaves(in_axes)):
        raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                        f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    to_spec = lambda axes: tree_util.tree_map(  # noqa: E731
        lambda a: _axes_to_pspec(axis_name, a), axes, is_leaf=lambda x: x is None)
    return shard_map(f, in_specs=Infer if in_axes is Infer else to_spec(in_axes),
                     out_specs=to_spec(out_axes), axis_names={axis_name}, check_vma=True)


def _context_mesh(mesh):
    if mesh is not None:
        return mesh
    mesh = get_mesh()
    if mesh is None:
        raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter "
                         "into a mesh context, or pass `mesh=` to shard_map.")
    return mesh


def _inferred_specs(leaves):
    specs = []
    for x in leaves:
        placement = getattr(x, "_placement", None)
        if placement is None and isinstance(x, Tracer) and x.aval.sharding_type is not None:
            specs.append(PartitionSpec(*x.aval.sharding_type.spec))
            continue
        if placement is None:
            raise ValueError("shard_map got in_specs=Infer (the default) but an argument is not "
                             f"placed on a mesh ({type(x).__name__} of shape "
                             f"{getattr(x, 'shape', ())}); pass in_specs= or device_put the "
                             "argument with a NamedSharding first.")
        specs.append(placement.spec)
    return specs


def _shard_map(f, mesh, in_specs, out_specs, check_vma, axis_names):
    by_specs: dict = {}  # in_specs=Infer: one wrapped function (and jit cache) per spec set

    @wraps(f)
    @api_boundary
    def wrapped(*args):
        mesh_ = _context_mesh(mesh)
        try:
            return _call(mesh_, args)
        finally:  # (after an inner call's: what this call's jaxpr prints as its mesh)
            if mesh is None:
                shard_map_shown_meshes.pop(mesh_.abstract_mesh, None)
            else:
                shard_map_shown_meshes[mesh_.abstract_mesh] = mesh_

    def _call(mesh_, args):
        if in_specs is Infer:
            leaves_, tree_ = tree_util.tree_flatten(args)
            specs = tuple(tree_util.tree_unflatten(tree_, _inferred_specs(leaves_)))
            key = (mesh_, tree_, tuple(tuple(s) for s in _inferred_specs(leaves_)))
            inner = by_specs.get(key)
            if inner is None:
                inner = by_specs[key] = _shard_map(f, mesh_, specs, out_specs, check_vma,
                                                   axis_names)
            return inner(*args)
        return _shard_map_call(f, mesh_, in_specs, out_specs, check_vma, axis_names, args,
                               wrapped)
    return wrapped


def _normalized(spec):
    """``spec`` with one-name tuples as the name: ``P(('i',),)`` is ``P('i',)``."""
    return PartitionSpec(*(p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in spec))


def _check_specs_match_args(leaves, specs):
    """JAX's check under an all-Explicit mesh: an argument's type already says how it is
    split, and ``in_specs`` must say the same (``reshard`` it otherwise)."""
    for x, spec in zip(leaves, specs):
        aval = aval_of(x)
        want = _normalized(tuple(spec) + (None,) * (aval.ndim - len(spec)))
        have = _normalized(aval.sharding_type.spec if aval.sharding_type is not None
                           else (None,) * aval.ndim)
        if tuple(want) != tuple(have):
            raise ValueError(
                f"in_specs passed to shard_map: {want} does not match the specs of the input: "
                f"{have} for arg: {aval}. `in_specs` is an optional argument so you can omit "
                "specifying it and shard_map will infer the in_specs from the arguments. If "
                "you want to reshard your inputs, you can use `jax.reshard` on the arguments "
                "and then pass those args to shard_map.")


def _with_out_specs(out, out_specs, mesh):
    """The results placed as ``out_specs`` name them (``P(None)`` stays ``P(None,)``, as
    JAX's): the compiled program's layout is the same, read back in its padded form."""
    leaves, tree = tree_util.tree_flatten(out)
    for leaf, spec in zip(leaves, _broadcast_specs(out_specs, tree, "out_specs")):
        placement = getattr(leaf, "_placement", None)
        if type(placement) is NamedSharding and placement.mesh == mesh:
            wanted = NamedSharding(mesh, spec, placement.memory_kind)
            if wanted == placement:
                leaf._placement = wanted
    return out


def _any_ur(specs, out_specs):
    """Whether a spec names unreduced or reduced axes (such a body runs compiled: the eager
    body's values have no unreduced or reduced type)."""
    leaves = list(specs) + tree_util.tree_leaves(out_specs, is_leaf=_is_spec)
    return any(isinstance(s, PartitionSpec) and (s.unreduced or s.reduced) for s in leaves)


def manual(abstract):
    return abstract.update(axis_types=(AxisType.Manual,) * len(abstract.axis_names))


def _shard_map_call(f, mesh, in_specs, out_specs, check_vma, axis_names, args, wrapped):
    leaves, tree = tree_util.tree_flatten(args)
    specs = _broadcast_specs(in_specs if isinstance(in_specs, tuple) and not isinstance(
        in_specs, PartitionSpec) else (in_specs,) * len(args) if _is_spec(in_specs) else in_specs,
        tree, "in_specs") if not _is_spec(in_specs) else \
        [PartitionSpec() if in_specs is None else in_specs] * len(leaves)
    if hi_shard_map.involves_hi(leaves, specs, out_specs):  # high-level (hijax) values
        return hi_shard_map.call(shard_map, f, mesh, specs, out_specs, check_vma, axis_names,
                                 leaves, tree)
    if (not axis_names or frozenset(axis_names) == frozenset(mesh.axis_names)) and \
            mesh.abstract_mesh.are_all_axes_explicit:
        _check_specs_match_args(leaves, specs)
    if type(trace_core._state.trace) is EvalTrace:
        placed = [_api.device_put(x, NamedSharding(mesh, s)) for x, s in zip(leaves, specs)]
        if (not axis_names or frozenset(axis_names) == frozenset(mesh.axis_names)) and not \
                _any_ur(specs, out_specs):
            # as JAX's: the body runs eagerly, a primitive at a time, on every device (each
            # a small program on the mesh, so compiled even under disable_jit)
            with _api.debug_mode.disable_jit(False):
                out = run_eager(shard_map, f, mesh, specs, out_specs, check_vma, placed, tree)
            return _with_out_specs(out, out_specs, mesh)
        # compiled even under disable_jit (where the jit would call back here, forever):
        # the body is traced once, as a program on the mesh
        with _api.debug_mode.disable_jit(False):
            out = _api.jit(wrapped)(*tree_util.tree_unflatten(tree, placed))
        return _with_out_specs(out, out_specs, mesh)
    abstract = mesh.abstract_mesh
    _concrete_meshes[abstract] = mesh
    local = []
    for x, spec in zip(leaves, specs):
        aval = aval_of(x)
        for d, size in enumerate(aval.shape):
            if size % spec_factor(abstract, spec, d):
                raise ValueError(f"shard_map in_specs {spec} split dimension {d} of size {size} "
                                 f"over {spec_factor(abstract, spec, d)} devices: not divisible.")
        block = ShapedArray([s // spec_factor(abstract, spec, d)
                             for d, s in enumerate(aval.shape)], aval.dtype, aval.weak_type,
                            vma=_spec_vma(abstract, spec) if check_vma else ())
        if check_vma and (spec.unreduced or spec.reduced):  # (passed through as themselves)
            block = with_manual_ur(block, spec.unreduced, spec.reduced, mesh=manual(abstract))
        local.append(block)
    out_store = []

    def body(*blocks):
        out = f(*tree_util.tree_unflatten(tree, blocks))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_store.append(out_tree)
        return out_leaves

    axis_env.append(abstract)
    vma_active[0] += bool(check_vma)
    try:
        closed = trace_to_jaxpr(body, local, make_debug_info(f, "shard_map", ()))
    finally:
        vma_active[0] -= bool(check_vma)
        axis_env.pop()
    out_tree = out_store[0]
    out_flat_specs = _broadcast_specs(out_specs, out_tree, "out_specs")
    if check_vma:
        check_out_vma(f, abstract, out_specs, out_flat_specs, closed.out_avals)
    # closures over enclosing tracers become replicated leading operands
    jaxpr = closed.jaxpr
    moved = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if isinstance(c, Tracer)]
    kept = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if not isinstance(c, Tracer)]
    body_jaxpr = ClosedJaxpr(Jaxpr([v for v, _ in kept], [v for v, _ in moved] + jaxpr.invars,
                                   jaxpr.outvars, jaxpr.eqns), [c for _, c in kept])
    operands = [c for _, c in moved] + leaves
    op_specs = [PartitionSpec()] * len(moved) + specs
    outs = shard_map_p.bind(*operands, jaxpr=body_jaxpr, mesh=abstract,
                            in_specs=tuple(op_specs), out_specs=tuple(out_flat_specs),
                            manual_axes=frozenset(axis_names or abstract.axis_names),
                            check_vma=bool(check_vma))
    return tree_util.tree_unflatten(out_tree, outs)
