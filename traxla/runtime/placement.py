"""Where arrays live when they span several devices: meshes, named shardings,
the per-device index maps that place host data, and reassembly on readback."""
from __future__ import annotations

import itertools

import numpy as np

import itertools as it

from traxla.ir.sharding import AbstractDevice, AbstractMesh, AxisType, PartitionSpec, explicit_only
from traxla.ir.thread_state import ThreadLocalStack, unusual as _unusual
from traxla.runtime import transfer_guard, xla_adapter as xla
from traxla.runtime.backend import Device, get_backend
from traxla.runtime.cache import on_clear
from traxla.ir.config import config as _config
from traxla.ir.avals import ShapedArray, interned, physical_aval, set_sharding_view
import traxla.runtime.array as _runtime_array
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Var
from traxla.lowering import ModuleShardings, lower_jaxpr


_config_values = _config.current  # the calling thread's view of the flags
_mesh_stack = ThreadLocalStack()  # per thread, as JAX keeps the current mesh
# The meshes entered with the legacy ``with mesh:`` (JAX's ``pxla.thread_resources``; a
# ``set_mesh`` does not enter them there, as in JAX).
legacy_meshes = ThreadLocalStack()


def _push_mesh(mesh):
    _mesh_stack.append(mesh)
    _mesh_stack_changed()


def _pop_mesh():
    _mesh_stack.pop()
    _mesh_stack_changed()


def _truncate_meshes(depth: int):
    """Leaves the first ``depth`` meshes of this thread's stack."""
    del _mesh_stack[depth:]
    _mesh_stack_changed()


def _mesh_stack_changed():
    """While this thread has a mesh context, the hit paths that serve programs by argument
    types alone step aside (as in a config block): computations go on the context mesh
    (``default_placement``)."""
    local = _config_values.__dict__
    if bool(_mesh_stack) != bool(local.get("_in_mesh_context", False)):
        if _mesh_stack:
            local["_in_mesh_context"] = True
            _config_values.local_blocks += 1
            _unusual.append(None)
        else:
            local["_in_mesh_context"] = False
            _config_values.local_blocks -= 1
            _unusual.pop()


def get_mesh():
    """The mesh set by the innermost ``set_mesh`` or ``with mesh:`` (None outside one)."""
    return _mesh_stack[-1] if _mesh_stack else None


class Mesh:
    """Devices laid out on named axes, each ``Auto``, ``Explicit`` or ``Manual``."""

    def __init__(self, devices, axis_names, axis_types=None):
        devices = np.asarray(devices, dtype=object)
        axis_names = tuple(axis_names)
        if devices.ndim != len(axis_names):
            raise ValueError(f"Mesh devices of shape {devices.shape} need {devices.ndim} axis names, "
                             f"got {axis_names}")
        self.devices = devices
        self.axis_names = axis_names
        first = devices.flat[0] if devices.size else None
        abstract_device = None if first is None else AbstractDevice(
            getattr(first, "device_kind", first.platform), None, first.platform)
        self.abstract_mesh = AbstractMesh(devices.shape, axis_names, axis_types,
                                          abstract_device=abstract_device)
        self.axis_types = self.abstract_mesh.axis_types

    are_all_axes_explicit = property(lambda self: self.abstract_mesh.are_all_axes_explicit)
    are_all_axes_auto = property(lambda self: self.abstract_mesh.are_all_axes_auto)
    are_all_axes_manual = property(lambda self: self.abstract_mesh.are_all_axes_manual)
    empty = property(lambda self: self.abstract_mesh.empty)

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_list(self):
        return list(self.devices.flat)

    def raw_devices(self):
        return [d._device for d in self.devices.flat]

    def __eq__(self, other):
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types and self.devices.shape == other.devices.shape
                and [d.id for d in self.devices.flat] == [d.id for d in other.devices.flat])

    def __hash__(self):
        return hash((self.axis_names, self.axis_types, tuple(d.id for d in self.devices.flat)))

    def _types_str(self):
        types = ", ".join(t.name for t in self.axis_types)
        return f"({types}{',' if len(self.axis_types) == 1 else ''})"

    def __str__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.devices.shape))
        return f"Mesh({axes}, axis_types={self._types_str()})"

    def __repr__(self):
        return (f"Mesh(axis_sizes={tuple(self.devices.shape)}, axis_names={self.axis_names!r}, "
                f"axis_types={self._types_str()})")

    def __enter__(self):
        _push_mesh(self)
        legacy_meshes.append(self)
        return self

    def __exit__(self, *exc):
        legacy_meshes.pop()
        _pop_mesh()


class NamedSharding:
    """An array's placement: ``spec`` names, per dimension, the mesh axes it is split over."""

    def __init__(self, mesh: Mesh, spec=PartitionSpec(), memory_kind=None):
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec) if isinstance(spec, (tuple, list)) else PartitionSpec(spec)
        for name in spec.axes():
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec} is not found in mesh: "
                                 f"{tuple(mesh.axis_names)}.")
        if (PartitionSpec.UNCONSTRAINED in spec
                and AxisType.Auto not in tuple(mesh.axis_types)):
            raise ValueError(f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh "
                             f"axis_types are `Auto`. Got mesh axis_types: "
                             f"{tuple(mesh.axis_types)}")
        self.mesh = mesh
        self.spec = spec
        # as JAX's: a sharding on devices lives in device memory unless told otherwise; one
        # on an abstract mesh (an aval's) names no memory kind
        self.memory_kind = memory_kind or (None if isinstance(mesh, AbstractMesh) else "device")
        self._hlo_cache = {}

    def __repr__(self):
        mem = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{mem})"

    def update(self, **kwargs) -> "NamedSharding":
        """A copy with ``mesh``, ``spec`` or ``memory_kind`` replaced (as JAX's)."""
        return NamedSharding(kwargs.pop("mesh", self.mesh), kwargs.pop("spec", self.spec),
                             kwargs.pop("memory_kind", self.memory_kind), **kwargs)

    def with_memory_kind(self, kind) -> "NamedSharding":
        return NamedSharding(self.mesh, self.spec, kind)

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    @property
    def is_fully_replicated(self) -> bool:
        """Every device holds the whole array: the spec splits over no axis of size > 1."""
        sizes = self.mesh.shape
        if PartitionSpec.UNCONSTRAINED in self.spec:
            return False  # as JAX's: the partitioner may split it
        if self.spec.unreduced and self.mesh.size > 1:
            return False  # each device holds a partial sum
        for p in self.spec:
            for name in () if p is None else (p if isinstance(p, tuple) else (p,)):
                if sizes[name] > 1:
                    return False
        return True

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Whether both lay an array of rank ``ndim`` out alike (as JAX's: the same devices
        and memory kind, and the same split, or both whole on every device)."""
        return _equivalent(self, other, ndim)

    def with_memory_kind(self, kind: str) -> "NamedSharding":
        """The same placement in the memory ``kind`` ('device', 'pinned_host')."""
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and _padded(self.spec) == _padded(other.spec) and self.memory_kind == other.memory_kind
                and self.spec.unreduced == other.spec.unreduced
                and self.spec.reduced == other.spec.reduced)

    def __hash__(self):
        return hash((self.mesh, _padded(self.spec), self.memory_kind, self.spec.unreduced,
                     self.spec.reduced))

    committed = True  # see _UncommittedSharding

    @property
    def device_set(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("device_set is not implemented for `jax.sharding.AbstractMesh`.")
        return set(self.mesh.device_list)

    @property
    def _device_assignment(self) -> tuple:
        """The mesh's devices in order (JAX's private name, which orbax reads)."""
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("_device_assignment is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        return tuple(self.mesh.device_list)

    @property
    def _addressable_device_assignment(self) -> tuple:
        return self._device_assignment  # one process: every device is addressable

    @property
    def is_fully_addressable(self) -> bool:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("is_fully_addressable is not implemented for "
                             "`jax.sharding.AbstractMesh`.")
        return True  # one process

    def full_spec(self, ndim):
        spec = tuple(self.spec)
        if len(spec) > ndim:
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(spec)}, but was applied to a value of rank {ndim}")
        spec = spec + (None,) * (ndim - len(spec))
        if self.spec.unreduced or self.spec.reduced:  # (kept: a tuple would drop them)
            return self.spec.update(partitions=spec)
        return spec

    def hlo(self, ndim):
        """The HloSharding of the data layout (unreduced mesh axes: whole on each device,
        as replicated ones; the annotation of a program says they hold partial sums)."""
        h = self._hlo_cache.get(ndim)
        if h is None:
            h = self._hlo_cache[ndim] = xla.hlo_sharding(
                self.mesh.devices.shape, self.mesh.axis_names, tuple(self.full_spec(ndim)), ndim)
        return h

    def gspmd(self, ndim):
        kind = None if self.memory_kind == "device" else self.memory_kind
        return xla.gspmd_sharding(self.mesh.raw_devices(), self.hlo(ndim), kind)

    def aval_sharding(self, ndim):
        """The type-level sharding: only Explicit axes, None when the type stays quiet."""
        if not any(t is AxisType.Explicit for t in self.mesh.axis_types):
            return None
        return explicit_only(self.mesh.abstract_mesh, self.full_spec(ndim), ndim)

    @property
    def memory_space(self):
        return None if self.memory_kind in ("device", None) else "host"

    def shard_shape(self, shape):
        out = []
        for size, p in zip(shape, self.full_spec(len(shape))):
            names = () if p is None else (p if isinstance(p, tuple) else (p,))
            n = int(np.prod([self.mesh.shape[a] for a in names])) if names else 1
            if size % n:
                raise ValueError(f"One of device_put args was given the sharding of {self}, which "
                                 f"implies that the global size of its dimension should be "
                                 f"divisible by {n}, but it is equal to {size} (full shape: "
                                 f"{tuple(shape)})")
            out.append(size // n)
        return tuple(out)

    def devices_indices_map(self, shape):
        return indices_map(self.hlo(len(shape)), self.mesh.device_list, shape)


_EMPTY_MESH = None


def _aval_sharding_view(aval):
    """JAX's ``aval.sharding``: the type's Explicit axes on their abstract mesh, or the
    empty mesh with ``P(None, ...)`` (one entry per dimension) when it names none."""
    global _EMPTY_MESH
    st = aval.sharding_type
    if st is not None:
        return NamedSharding(st.mesh, st.spec)
    if _EMPTY_MESH is None:
        ever = AbstractMesh.ever_created  # the empty mesh is no user mesh: the flag stays
        _EMPTY_MESH = AbstractMesh((), ())
        AbstractMesh.ever_created = ever
    return NamedSharding(_EMPTY_MESH, PartitionSpec(*(None,) * len(aval.shape)))


set_sharding_view(_aval_sharding_view)


def _padded(spec):
    spec = tuple(spec)
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


class HloPlacement:
    """An output placement chosen by the compiler (Auto axes): an HloSharding over devices."""

    committed = True

    def __init__(self, devices, hlo):
        self.devices = list(devices)
        self.hlo = hlo

    def __repr__(self):
        return f"GSPMDSharding({self.hlo})"

    def __eq__(self, other):
        return (isinstance(other, HloPlacement) and self.hlo == other.hlo
                and [d.id for d in self.devices] == [d.id for d in other.devices])

    def __hash__(self):
        return hash((str(self.hlo), tuple(d.id for d in self.devices)))

    memory_kind = "device"

    def devices_indices_map(self, shape):
        return indices_map(self.hlo, self.devices, shape)

    def as_named(self) -> "NamedSharding":
        """The same placement as a NamedSharding: a mesh with one axis per tile dimension
        (its devices in the tile assignment's order), each array dimension split over its
        own axis; a replicated placement is ``P()`` over all the devices."""
        hlo = self.hlo
        if hlo.is_replicated():
            mesh = Mesh(np.asarray(self.devices, dtype=object), ("_gspmd0",))
            return NamedSharding(mesh, PartitionSpec())
        if not hlo.is_tiled():
            raise NotImplementedError(f"placing an array by the sharding {hlo} (only tiled "
                                      "and replicated HloShardings)")
        dims = list(hlo.tile_assignment_dimensions())
        ndim = len(dims) - len(hlo.subgroup_types()) - int(hlo.replicate_on_last_tile_dim())
        names = tuple(f"_gspmd{i}" for i in range(len(dims)))
        order = [self.devices[i] for i in hlo.tile_assignment_devices()]
        mesh = Mesh(np.asarray(order, dtype=object).reshape(dims), names)
        return NamedSharding(mesh, PartitionSpec(*[names[i] if dims[i] > 1 else None
                                                   for i in range(ndim)]))


class SingleDeviceSharding:
    committed = True

    def __init__(self, device, *, memory_kind=None):
        self.device = device
        self.memory_kind = memory_kind or "device"

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind={self.memory_kind})"

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and other.device == self.device
                and other.memory_kind == self.memory_kind)

    def __hash__(self):
        return hash((self.device, self.memory_kind))

    def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
        return SingleDeviceSharding(self.device, memory_kind=kind)

    def _as_named(self) -> "NamedSharding":
        """The one-device mesh placement traxla keeps such an array with."""
        return NamedSharding(Mesh(np.array([self.device]), ("_device",)), PartitionSpec(),
                             self.memory_kind)

    @property
    def device_set(self):
        return {self.device}

    @property
    def _device_assignment(self) -> tuple:
        return (self.device,)

    _addressable_device_assignment = _device_assignment

    is_fully_replicated = True
    is_fully_addressable = True
    num_devices = 1

    def shard_shape(self, shape):
        return tuple(shape)

    def is_equivalent_to(self, other, ndim: int) -> bool:
        return _equivalent(self, other, ndim)

    def devices_indices_map(self, shape):
        return {self.device: tuple(slice(None) for _ in shape)}


def _equivalent(a, b, ndim) -> bool:
    if not hasattr(b, "device_set") or a.memory_kind != b.memory_kind:
        return False
    if a.device_set != b.device_set:
        return False
    if a.is_fully_replicated and getattr(b, "is_fully_replicated", False):
        return True
    return (isinstance(a, NamedSharding) and isinstance(b, NamedSharding)
            and a.mesh == b.mesh and a.full_spec(ndim) == b.full_spec(ndim))


class Shard:
    """One device's block of an Array: ``replica_id`` counts the devices before it (in the
    sharding's device order) holding the same block, as JAX's (0: the first copy)."""
    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device, index, data, replica_id=0):
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data=...)")


def device_replica_id_map(sharding, shape) -> dict:
    """``{Device: replica id}`` (JAX's ``device_replica_id_map``)."""
    seen: dict = {}
    out = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        key = tuple((s.start, s.stop, s.step) for s in index)
        out[device] = seen.get(key, 0)
        seen[key] = out[device] + 1
    return out


def indices_map(hlo, devices, shape):
    """``{Device: tuple of slices}``: which block of the global array each device holds."""
    layout = xla.tile_layout(hlo, len(shape))
    full = tuple(slice(None) for _ in shape)
    if layout is None:
        return {d: full for d in devices}
    tile, sub, devs = layout
    out = {}
    positions = list(itertools.product(*[range(t) for t in tile + sub]))
    for pos, dev_index in zip(positions, devs):
        slices = []
        for d, (size, t) in enumerate(zip(shape, tile)):
            block = size // t  # an unsplit dimension is slice(None), as JAX's
            slices.append(slice(None) if t == 1 else slice(pos[d] * block, (pos[d] + 1) * block))
        out[devices[dev_index]] = tuple(slices)
    return out


def shard_host_value(host: np.ndarray, placement, device_order):
    """Per-device host slices in ``device_order``."""
    idx = placement.devices_indices_map(host.shape)
    # asarray(order='C'), not ascontiguousarray: that one turns a 0-d block into shape (1,)
    return [np.asarray(host[idx[d]], order="C") for d in device_order]


def local_blocks(buffer, placement, shape):
    """``[(Device, index, host block)]`` for the blocks this process holds."""
    by_id = dict(xla.per_device_buffers(buffer))
    return [(device, index, xla.to_numpy(by_id[device.id]))
            for device, index in placement.devices_indices_map(shape).items() if device.id in by_id]


def assemble(buffer, placement, shape, dtype) -> np.ndarray:
    """Reads a multi-device array back into one host array."""
    blocks = local_blocks(buffer, placement, shape)
    covered = {d.id for d, _, _ in blocks}
    missing = [d for d in placement.devices_indices_map(shape) if d.id not in covered]
    out = np.empty(shape, dtype)
    if missing:
        written = np.zeros(shape, bool)
        for _, index, block in blocks:
            out[index] = block
            written[index] = True
        if not written.all():
            raise RuntimeError(
                "Fetching the value of an array that spans non-addressable devices (other "
                "processes) is not possible; read its addressable_shards instead.")
        return out
    for _, index, block in blocks:
        out[index] = block
    return out


def default_device() -> Device:
    return get_backend().devices[0]


class _UncommittedSharding(NamedSharding):
    """Where ``default_device`` put an array: on that device, not committed to it (JAX's
    ``committed=False``), so that a computation with committed operands moves it."""

    committed = False


_device_placements: dict = {}
on_clear(_device_placements.clear)


def device_placement(target, committed=True):
    """The one-device placement of ``target`` (a Device, or a platform name for its first
    device) when it is not the default backend's first device, else None: programs and new
    arrays go there, as under JAX's ``default_device`` and ``jit(device=, backend=)``."""
    key = (target, committed)
    hit = _device_placements.get(key, _device_placements)
    if hit is not _device_placements:
        return hit
    device = get_backend(target).devices[0] if isinstance(target, str) else target
    backend = get_backend()
    if device._device == backend.default_device:
        placement = None
    else:
        cls = NamedSharding if committed else _UncommittedSharding
        placement = cls(Mesh(np.array([device]), ("_device",)), PartitionSpec())
    _device_placements[key] = placement
    return placement


def pinned_placement(device):
    """The committed one-device placement of ``device``, the default device's included:
    where ``device_put(x, device)`` puts ``x`` (JAX commits an array put on any device)."""
    key = (device, "pinned")
    hit = _device_placements.get(key)
    if hit is None:
        hit = _device_placements[key] = NamedSharding(Mesh(np.array([device]), ("_device",)),
                                                      PartitionSpec())
        if device._device == get_backend().default_device:
            pinned_default[0] = hit
    return hit


# The pinned placement of the default backend's first device, once made (else None): an
# Array with it is committed there, but runs the default device's programs (the hit paths
# read it: their results keep it).
pinned_default = [None]
on_clear(lambda: pinned_default.__setitem__(0, None))


def is_pinned_default(placement) -> bool:
    """Whether ``placement`` is the default device's pinned one (made before a
    ``clear_caches``, it is an equal object)."""
    if placement is pinned_default[0]:
        return True
    return (type(placement) is NamedSharding and placement.mesh.axis_names == ("_device",)
            and placement.memory_kind == "device"
            and placement.mesh.device_list[0]._device == get_backend().default_device)


def default_placement():
    """Where the calling thread's ``default_device`` puts new arrays and programs (None:
    the default backend's first device, the common case, read in one attribute lookup);
    under a concrete mesh context (``set_mesh``), replicated on that mesh, committed (as
    JAX places computations without committed operands on the context mesh)."""
    target = _config_values.default_device
    if target is not None:
        return device_placement(target, committed=False)
    if _unusual and _mesh_stack:
        mesh = _mesh_stack[-1]
        if isinstance(mesh, Mesh):
            placement = _mesh_placements.get(mesh)
            if placement is None:
                placement = _mesh_placements[mesh] = NamedSharding(mesh, PartitionSpec())
            return placement
    return None


_mesh_placements: dict = {}
on_clear(_mesh_placements.clear)


def uncommitted(placement):
    """``placement`` (a one-device NamedSharding) as ``default_device`` leaves it."""
    return _UncommittedSharding(placement.mesh, placement.spec, placement.memory_kind)


def spec_from_hlo(hlo, mesh: Mesh, ndim: int, trim=False):
    """The PartitionSpec whose HloSharding on ``mesh`` is ``hlo`` (None if there is none);
    with ``trim``, without trailing Nones (as JAX reads a compiler's choice: ``P('x',)``)."""
    names = mesh.axis_names
    for assignment in it.product(range(-1, ndim), repeat=len(names)):
        per_dim = [tuple(n for n, a in zip(names, assignment) if a == d) for d in range(ndim)]
        # a dimension split over several axes, in any order: P(('y', 'x')) too
        for orders in it.product(*(it.permutations(axes) for axes in per_dim)):
            spec = [None if not axes else (axes[0] if len(axes) == 1 else axes)
                    for axes in orders]
            if xla.hlo_sharding(mesh.devices.shape, names, spec, ndim) == hlo:
                while trim and spec and spec[-1] is None:
                    spec.pop()
                return PartitionSpec(*spec)
    return None


def placement_from_hlo(hlo, mesh: Mesh, aval, memory_kind="device"):
    # a sharding in the type (Explicit axes) is the result's, dimension for dimension, as is
    # any result on a mesh with Explicit axes (JAX types it on the context mesh); a key's
    # HloSharding spans its stored trailing dims too (whole on each device)
    ndim, stored = len(aval.shape), physical_aval(aval).ndim
    st = aval.sharding_type
    if (st is not None and tuple(st.mesh.axis_names) != tuple(mesh.axis_names)
            and st.mesh.size == mesh.devices.size):
        # typed on a mesh of other axes (use_abstract_mesh): its axes over these devices
        mesh = Mesh(mesh.devices.reshape(tuple(st.mesh.axis_sizes)), st.mesh.axis_names,
                    st.mesh.axis_types)
    if st is not None and st.spec.unreduced:  # (each device holds a partial sum: the type's)
        return NamedSharding(mesh, st.spec, memory_kind)
    trim = aval.sharding_type is None and AxisType.Explicit not in mesh.axis_types
    spec = spec_from_hlo(hlo, mesh, stored, trim=trim)
    if spec is not None and stored != ndim:
        spec = PartitionSpec(*tuple(spec)[:ndim])
    if spec is None:
        placement = HloPlacement(mesh.device_list, hlo)
        placement.mesh = mesh
        return placement
    return NamedSharding(mesh, spec, memory_kind)


def typed_by_placement(aval, placement):
    """``aval`` of a program's result placed by ``placement``: one the type left unsharded,
    on a mesh with Explicit axes, is typed with that mesh (replicated dimensions), as JAX
    types every value made under such a mesh context."""
    if aval.sharding_type is not None or type(placement) is not NamedSharding:
        return aval
    sharding = placement.aval_sharding(len(aval.shape))
    return aval if sharding is None else interned(aval.update(sharding=sharding))


_reshard_cache: dict = {}
on_clear(_reshard_cache.clear)


def public_sharding(placement):
    """The sharding users see for ``placement``: a one-device placement as JAX's
    SingleDeviceSharding."""
    mesh = getattr(placement, "mesh", None)
    if mesh is not None and mesh.axis_names == ("_device",):  # one device (as JAX's)
        return SingleDeviceSharding(mesh.device_list[0], memory_kind=placement.memory_kind)
    return placement


def device_put_placed(host: np.ndarray, aval, sharding):
    """An Array of ``host`` (already in ``aval``'s dtype) laid out by ``sharding``.
    Partially replicated layouts are reached through a one-time identity program,
    since jaxlib's direct transfer refuses them."""
    sharding.shard_shape(host.shape)  # validates divisibility with a clear message
    transfer_guard.host_to_device(aval, lambda: public_sharding(sharding))
    return _put_placed(host, aval, sharding)


def _put_placed(host: np.ndarray, aval, sharding):
    process = xla.process_index()
    devices = [d for d in sharding.mesh.device_list if d.process_index == process]
    raw = [d._device for d in devices]
    typed = ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                        sharding.aval_sharding(len(aval.shape)), sharding.memory_space)
    # keys: ``host`` is their raw data, with trailing dims that are never split
    ndim = len(physical_aval(typed).shape)
    hlo = sharding.hlo(ndim)
    layout = xla.tile_layout(hlo, ndim)
    if layout is None or not layout[1]:
        shards = shard_host_value(host, sharding, devices)  # this process's blocks only
        buf = xla.device_put_sharded(physical_aval(typed).update(sharding=None),
                                     sharding.gspmd(ndim), shards, raw)
        return _runtime_array.make_array(typed, buf, sharding)
    replicated = NamedSharding(sharding.mesh, PartitionSpec(), sharding.memory_kind)
    rep = _put_placed(host, aval, replicated)
    return reshard_array(rep, sharding, typed)


def involves_unreduced(array, sharding) -> bool:
    """Whether moving ``array`` to ``sharding`` reads or makes partial sums (unreduced
    mesh axes): a program does it on the devices, as JAX's ``_device_put_reshard``."""
    src = getattr(array, "_placement", None)
    return bool(getattr(getattr(sharding, "spec", None), "unreduced", None)
                or getattr(getattr(src, "spec", None), "unreduced", None))


def put_unreduced(array, sharding):
    """``array`` laid out as ``sharding`` where either side is unreduced over some mesh
    axes: an identity program whose Shardy annotations say so (the partitioner sums the
    partial sums, or splits a value into them), as JAX's ``jit`` with out_shardings."""
    ndim = len(array.shape)
    src = array._placement
    if not isinstance(src, NamedSharding) or src.mesh != sharding.mesh:
        if getattr(getattr(src, "spec", None), "unreduced", None):
            raise NotImplementedError("moving an unreduced array to another mesh")
        replicated = NamedSharding(sharding.mesh, PartitionSpec(), sharding.memory_kind)
        array = _put_placed(array.physical_value(), ShapedArray(
            array.shape, array.dtype, array.aval.weak_type), replicated)
    typed = ShapedArray(array.shape, array.dtype, array.aval.weak_type,
                        sharding.aval_sharding(ndim), sharding.memory_space)
    return reshard_array(array, sharding, typed)


def reshard_array(array, sharding, typed_aval):
    """Moves ``array`` (on ``sharding``'s mesh) to ``sharding`` with a cached identity program."""
    from traxla.runtime.executable import ShardedExecutable  # circular: traxla.runtime.executable imports traxla.runtime.placement while it loads
    src = array._placement
    key = (src, sharding, typed_aval)
    exe = _reshard_cache.get(key)
    if exe is None:
        mesh = sharding.mesh
        v = Var(typed_aval)
        closed = ClosedJaxpr(Jaxpr([], [v], [v], []))
        ndim = len(typed_aval.shape)
        kind = lambda s: None if s.memory_kind == "device" else s.memory_kind  # noqa: E731
        shardings = ModuleShardings(list(zip(mesh.axis_names, mesh.devices.shape)),
                                    [src.full_spec(ndim)], [sharding.full_spec(ndim)],
                                    [kind(src)], [kind(sharding)])
        exe = ShardedExecutable(lower_jaxpr(closed, "reshard", shardings), [typed_aval],
                                [typed_aval], mesh, [sharding])
        _reshard_cache[key] = exe
    return exe.execute([array])[0]
