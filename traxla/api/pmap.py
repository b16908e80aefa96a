"""``pmap`` as JAX 0.10.2 builds it: a ``jit`` of a ``shard_map`` over a one-axis mesh of
the first ``n`` devices (``n`` the mapped size), named ``axis_name``. Each device gets one
slice of the mapped arguments (the mapped axis squeezed away), runs ``fun``, and its
results are stacked back along ``out_axes``; collectives over ``axis_name`` talk between
devices. Outside any trace the results are ``Array``s sharded over the devices."""
from __future__ import annotations

import inspect

import numpy as np

from traxla.base.wrapping import wraps
from traxla import tree_util
from traxla.api_util import ensure_index_tuple
from traxla.base.tree_functions import _prefix_error
from traxla.ir.sharding import AbstractMesh, PartitionSpec
from traxla.ir.thread_state import axis_env
from traxla.primitives.shapes import expand_dims, squeeze
from traxla.distributed import process_count
from traxla.runtime.backend import devices as _backend_devices
from traxla.runtime.placement import Mesh, NamedSharding
from traxla.tracer import EvalTrace, Tracer, traces as trace_core
import traxla.api as _api
from traxla.sharding.shard_map import shard_map
from traxla.api import mesh_dispatch  # noqa: F401  (eager shard_map / jit-with-mesh equations)

_DEFAULT_AXIS_NAME = "_internal_pmap_axis_name"


class IndivisibleError(ValueError):
    """A mapped axis the devices cannot split evenly (JAX's class of the same name)."""


def _check_callable(fun):
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")


def _rebase_donate_argnums(donate, static):
    """Donated positions counted among the dynamic arguments (JAX's rebase_donate_argnums)."""
    static = sorted(set(static))
    return tuple(d - sum(1 for s in static if s < d) for d in sorted(set(donate))
                 if d not in static)


def _axes_to_pspec(axis_name, axis):
    if axis is None:
        return PartitionSpec()
    return PartitionSpec(*[None] * axis, axis_name)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
    """Maps ``fun`` over the leading (``in_axes``) axis of its arguments, one slice per
    device, as JAX's ``pmap`` (built, as in JAX 0.10, on ``jit`` and ``shard_map``)."""
    if devices is not None:
        if not devices:
            raise ValueError("'devices' argument to pmap must be non-empty, or None.")
        devices = tuple(devices)
    _check_callable(fun)
    axis_name = _DEFAULT_AXIS_NAME if axis_name is None else axis_name
    static = ensure_index_tuple(static_broadcasted_argnums)
    donate = _rebase_donate_argnums(ensure_index_tuple(donate_argnums), static)
    if not all(type(leaf) is int for leaf in tree_util.tree_leaves(in_axes)):
        raise TypeError("pmap in_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {in_axes}.")
    if not all(type(leaf) is int for leaf in tree_util.tree_leaves(out_axes)):
        raise TypeError("pmap out_axes must be an int, None, or (nested) container with those "
                        f"types as leaves, but got {out_axes}.")
    cache: dict = {}

    def prepare(args, kwargs):
        dyn_fun, dyn_argnums, dyn_args, static_key = _dyn_args(fun, static, args)
        flat, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
        in_axes_flat = _in_axes_flat(in_axes, dyn_argnums, dyn_args, kwargs, in_tree)
        size = _mapped_axis_size(flat, in_axes_flat)
        clean = type(trace_core._state.trace) is EvalTrace
        mesh_devices = _mesh_devices(devices, backend, size, axis_size)
        _check_not_nested(mesh_devices, axis_name)
        donated = _donated(donate, dyn_args, len(flat))
        key = (static_key, in_tree, in_axes_flat, donated, mesh_devices)
        cached = cache.get(key)
        if cached is None:
            cached = cache[key] = _build(dyn_fun, in_tree, in_axes_flat, out_axes, donated,
                                         mesh_devices, axis_name)
        _check_divisible(flat, in_axes_flat, cached[2])
        return (cached[0] if clean else cached[1]), flat, (cached[2] if clean else None)

    @wraps(fun)
    def pmapped(*args, **kwargs):
        jitted, flat, mesh = prepare(args, kwargs)
        out = jitted(*flat)
        if mesh is not None:
            _name_out_shardings(out, out_axes, mesh)
        return out

    def call_flat(*args, **kwargs):
        jitted, flat, _ = prepare(args, kwargs)
        return jitted(*flat)

    def lower(*args, **kwargs):
        """JAX's Lowered, whose compiled form is called with ``fun``'s own arguments."""
        return _api.jit(call_flat, static_argnums=static).lower(*args, **kwargs)

    pmapped.lower = lower
    return pmapped


def _dyn_args(fun, static, args):
    """The function of the dynamic arguments (static ones bound), their positions and
    values, and the static values (the cache key part)."""
    if not static:
        return fun, None, args, ()
    if max(static) >= len(args):
        raise ValueError(
            f"pmapped function has static_broadcasted_argnums={static} but was called with "
            f"only {len(args)} positional argument{'s' if len(args) > 1 else ''}. All static "
            "broadcasted arguments must be passed positionally.")
    static_set = {s % len(args) for s in static}
    static_vals = []
    for i in sorted(static_set):
        value = args[i]
        try:
            if isinstance(value, Tracer):
                raise TypeError
            hash(value)
        except TypeError:
            raise ValueError(
                "Non-hashable static arguments are not supported, as this can lead to "
                f"unexpected cache-misses. Static argument (index {i}) of type {type(value)} "
                f"for function {getattr(fun, '__name__', fun)} is non-hashable.") from None
        static_vals.append((i, type(value), value))
    dyn_argnums = [i for i in range(len(args)) if i not in static_set]
    static_at = {i: value for i, _, value in static_vals}  # (not the dynamic arguments)
    n_args = len(args)

    @wraps(fun)
    def dyn_fun(*dyn, **kwargs):
        dyn_it = iter(dyn)
        full = [static_at[i] if i in static_at else next(dyn_it) for i in range(n_args)]
        return fun(*full, **kwargs)
    return dyn_fun, dyn_argnums, tuple(args[i] for i in dyn_argnums), tuple(static_vals)


def _donated(donate, dyn_args, n_flat):
    """Per flat leaf of ``(dyn_args, kwargs)``: whether its positional argument is donated
    (keyword arguments never are)."""
    flags = []
    for i, a in enumerate(dyn_args):
        flags += [i in donate] * len(tree_util.tree_leaves(a))
    return tuple(flags + [False] * (n_flat - len(flags)))


def _in_axes_flat(in_axes, dyn_argnums, dyn_args, kwargs, in_tree):
    if dyn_argnums is not None and isinstance(in_axes, tuple):
        if len(in_axes) <= max(dyn_argnums, default=-1):
            dyn_in_axes = in_axes  # reported below as a prefix mismatch
        else:
            dyn_in_axes = tuple(in_axes[i] for i in dyn_argnums)
    else:
        dyn_in_axes = in_axes
    is_none = lambda x: x is None  # noqa: E731
    try:
        flat = tree_util.broadcast_prefix((dyn_in_axes, 0), (tuple(dyn_args), kwargs),
                                          is_leaf=is_none)
    except ValueError:
        err = next(_prefix_error((), (dyn_in_axes, 0), (tuple(dyn_args), kwargs), is_none), None)
        if err is None:
            raise
        msg = err("pmap in_axes").args[0]
        msg += ("\n\nThe 'full pytree' here is the tuple of arguments passed positionally to the "
                "pmapped function, and the value of `in_axes` must be a tree prefix of that "
                "tuple. But it was not a prefix.")
        if kwargs:
            msg += ("\n\nWhen some arguments are passed by keyword to the pmapped function, they "
                    "are not included in the comparison to `in_axes`. Instead, each argument "
                    "passed by keyword is mapped over its leading axis. See the description of "
                    "`in_axes` in the `pmap` docstring: "
                    "https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html#jax.pmap")
        msg += ("\n\nCheck that the value of the `in_axes` argument to `pmap` is a tree prefix "
                "of the tuple of arguments passed positionally to the pmapped function.")
        raise ValueError(msg) from None
    return tuple(flat)


def _mapped_axis_size(flat, in_axes_flat) -> int:
    for x, ax in zip(flat, in_axes_flat):
        if ax is not None and hasattr(x, "shape"):
            return int(x.shape[ax])
    raise ValueError("pmap requires at least one argument with a mapped axis.")


def _mesh_devices(devices, backend, size, axis_size):
    if process_count() > 1:
        # JAX turns each process's local slices into one global array here; not built
        raise NotImplementedError("pmap across several processes is not supported by traxla: "
                                  "use jit with shardings or shard_map on a global mesh.")
    if axis_size is not None and axis_size != size:
        raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size "
                         f"{size}.")
    mesh_devices = devices if devices is not None else tuple(_backend_devices(backend))
    return tuple(mesh_devices[:size])


def _check_not_nested(mesh_devices, axis_name):
    """JAX 0.10's pmap (a shard_map) inside another pmap's body is refused: the inner
    mesh is not the context's (now Manual) mesh."""
    for frame in reversed(axis_env):
        if isinstance(frame, AbstractMesh):
            inner = Mesh(_device_grid(mesh_devices), (axis_name,))
            device = mesh_devices[0]
            raise ValueError(
                f"The context mesh {_manual_repr(frame, device)} should match the mesh passed to "
                f"shard_map {inner}")


def _manual_repr(mesh, device):
    """JAX's repr of the context mesh inside a shard_map body (its axes now Manual)."""
    axes = ", ".join(f"'{n}': {s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes))
    types = ", ".join("Manual" for _ in mesh.axis_names)
    comma = "," if len(mesh.axis_names) == 1 else ""
    return (f"AbstractMesh({axes}, axis_types=({types}{comma}), device_kind="
            f"{getattr(device, 'device_kind', device.platform)}, num_cores=None, "
            f"platform={device.platform})")


def _device_grid(mesh_devices):
    grid = np.empty(len(mesh_devices), dtype=object)
    grid[:] = list(mesh_devices)
    return grid


def _check_divisible(flat, in_axes_flat, mesh):
    """JAX's error (its IndivisibleError, a ValueError) for a mapped axis that the mesh
    cannot split: more slices than devices, or the spec of a negative in_axes."""
    n = mesh.size
    name = mesh.axis_names[0]
    for x, ax in zip(flat, in_axes_flat):
        if ax is None or not hasattr(x, "shape"):
            continue
        spec = _axes_to_pspec(name, ax)
        dim = len(spec) - 1
        shape = tuple(x.shape)
        if dim < len(shape) and shape[dim] % n == 0:
            continue
        sharding = NamedSharding(mesh, spec)
        factors = [n if d == dim else 1 for d in range(len(shape))]
        size = shape[dim] if dim < len(shape) else None
        raise IndivisibleError(
            f"Sharding {sharding} implies that array axis {dim} is partitioned {n} times, but "
            f"the dimension size is {size} (full shape: {shape}, per-dimension tiling "
            f"factors: {factors} should evenly divide the shape)")


def _name_out_shardings(out, out_axes, mesh):
    """Each result's sharding as JAX's pmap names it, ``NamedSharding(mesh, P(..., name))``
    from ``out_axes`` (the layout the program produced, with its spec not padded with
    Nones to the result's rank)."""
    is_none = lambda x: x is None  # noqa: E731
    leaves = tree_util.tree_leaves(out)
    try:
        axes = tree_util.broadcast_prefix(out_axes, out, is_leaf=is_none)
    except ValueError:
        return
    name = mesh.axis_names[0]
    for leaf, ax in zip(leaves, axes):
        placement = getattr(leaf, "_placement", None)
        if not isinstance(placement, NamedSharding) or placement.mesh != mesh:
            continue
        named = NamedSharding(mesh, _axes_to_pspec(name, ax), placement.memory_kind)
        ndim = len(leaf.shape)
        if len(named.spec) <= ndim and named.full_spec(ndim) == placement.full_spec(ndim):
            leaf._placement = named


def _build(fun, in_tree, in_axes_flat, out_axes, donated, mesh_devices, axis_name):
    """The jitted shard_map of ``fun`` (with and without explicit shardings) and its mesh."""
    mesh = Mesh(_device_grid(mesh_devices), (axis_name,))
    in_specs = tuple(_axes_to_pspec(axis_name, ax) for ax in in_axes_flat)
    is_none = lambda x: x is None  # noqa: E731
    out_specs = tree_util.tree_map(lambda ax: _axes_to_pspec(axis_name, ax), out_axes,
                                   is_leaf=is_none)

    def _fun(*flat_args):
        args = [x if ax is None else squeeze(x, (ax,)) for x, ax in zip(flat_args, in_axes_flat)]
        args, kwargs = tree_util.tree_unflatten(in_tree, args)
        out = fun(*args, **kwargs)
        out_flat, out_tree = tree_util.tree_flatten(out)
        out_axes_flat = tree_util.broadcast_prefix(out_axes, out, is_leaf=is_none)
        out_flat = [x if ax is None else expand_dims(x, (ax,))
                    for x, ax in zip(out_flat, out_axes_flat)]
        return tree_util.tree_unflatten(out_tree, out_flat)

    pmapped = shard_map(_fun, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                        check_vma=False, axis_names=frozenset(mesh.axis_names))
    donate_argnums = tuple(i for i, d in enumerate(donated) if d)
    # Arguments are laid out over the devices before the call; the results come out laid
    # out as the shard_map's out_specs say (JAX also passes them as out_shardings).
    in_shardings = tuple(NamedSharding(mesh, s) for s in in_specs)
    jitted = _api.jit(pmapped, donate_argnums=donate_argnums)
    jitted_with_shardings = _api.jit(pmapped, donate_argnums=donate_argnums,
                                     in_shardings=in_shardings)
    return jitted_with_shardings, jitted, mesh
