"""Placement in the type: mesh axis types, partition specs, and the sharding an
aval carries. Under ``Explicit`` mesh axes the spec is part of the type and is
printed (``f32[8@x,16@y]``); ``Auto`` axes stay out of the type."""
from __future__ import annotations

import enum


class AxisType(enum.Enum):
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _get_default_unconstrained():
    return _UNCONSTRAINED_PARTITION


class UnconstrainedSingleton:
    """``P.UNCONSTRAINED``: a dimension whose placement the partitioner may choose."""

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_get_default_unconstrained, ())


_UNCONSTRAINED_PARTITION = UnconstrainedSingleton()


class PartitionSpec(tuple):
    """One entry per array dimension: None, a mesh axis name, a tuple of names, or
    ``UNCONSTRAINED``."""

    UNCONSTRAINED = _UNCONSTRAINED_PARTITION

    def __new__(cls, *partitions):
        return tuple.__new__(cls, tuple(p if not isinstance(p, list) else tuple(p) for p in partitions))

    def __repr__(self):
        return "P(" + ", ".join(repr(p) for p in self) + ("," if len(self) == 1 else "") + ")"

    __str__ = __repr__

    def __getnewargs__(self):  # pickled and copied as the entries (not one tuple of them)
        return tuple(self)

    def axes(self):
        """The mesh axis names the spec uses, in order."""
        out = []
        for p in self:
            if p is None or p is _UNCONSTRAINED_PARTITION:
                continue
            out.extend(p if isinstance(p, tuple) else (p,))
        return out


P = PartitionSpec


class AbstractDevice:
    """What an abstract mesh keeps of its devices: their kind, core count and platform."""

    __slots__ = ("device_kind", "num_cores", "platform")

    def __init__(self, device_kind, num_cores, platform):
        self.device_kind, self.num_cores, self.platform = device_kind, num_cores, platform

    def __eq__(self, other):
        return (isinstance(other, AbstractDevice) and self.device_kind == other.device_kind
                and self.num_cores == other.num_cores and self.platform == other.platform)

    def __hash__(self):
        return hash((self.device_kind, self.num_cores, self.platform))

    def _repr(self):
        return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")

    def __repr__(self):
        return f"AbstractDevice({self._repr()})"


class AbstractMesh:
    """A mesh's shape without its devices: what the type system needs. The abstract
    device (set for the abstract mesh of a concrete mesh) shows in the repr, as JAX's,
    but not in equality: meshes of the same axes are one type here."""

    __slots__ = ("axis_names", "axis_sizes", "axis_types", "abstract_device", "_hash")
    # Whether any mesh was ever made in this process: a whole-program search for the mesh
    # of a shard_map, reshard or sharding constraint has nothing to find until one is.
    ever_created = False

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        AbstractMesh.ever_created = True
        self.abstract_device = abstract_device
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(self.axis_names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(self.axis_names)
        self.axis_types = tuple(axis_types)
        if not len(self.axis_sizes) == len(self.axis_names) == len(self.axis_types):
            raise ValueError(f"mesh axis sizes {self.axis_sizes}, names {self.axis_names} and "
                             f"types {self.axis_types} must have the same length")
        self._hash = hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __reduce__(self):  # copies and unpickled meshes come through __init__ too
        return _abstract_mesh, (self.axis_sizes, self.axis_names, self.axis_types,
                                self.abstract_device)

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        """Itself (as JAX's: code reads ``mesh.abstract_mesh`` of either kind of mesh)."""
        return self

    @property
    def are_all_axes_explicit(self) -> bool:
        """Whether the mesh has axes and all are Explicit (as JAX's; likewise below)."""
        return bool(self.axis_types) and all(t is AxisType.Explicit for t in self.axis_types)

    @property
    def are_all_axes_auto(self) -> bool:
        return bool(self.axis_types) and all(t is AxisType.Auto for t in self.axis_types)

    @property
    def are_all_axes_manual(self) -> bool:
        return bool(self.axis_types) and all(t is AxisType.Manual for t in self.axis_types)

    @property
    def empty(self) -> bool:
        """No axes: what ``get_abstract_mesh()`` gives outside any mesh context."""
        return not self.axis_names

    @property
    def shape(self):
        """``{axis name: size}`` in axis order (an OrderedDict, as JAX's)."""
        import collections
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        if not self.axis_sizes:
            return 0  # as JAX's empty mesh
        n = 1
        for s in self.axis_sizes:
            n *= s
        return n

    def axis_type(self, name) -> AxisType:
        return self.axis_types[self.axis_names.index(name)]

    def axis_size(self, name) -> int:
        return self.axis_sizes[self.axis_names.index(name)]

    @property
    def explicit_axes(self):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Explicit)

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names and self.axis_types == other.axis_types)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        axes = ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        device = "" if self.abstract_device is None else ", " + self.abstract_device._repr()
        return f"AbstractMesh({axes or '()'}, axis_types={self.axis_types}{device})"

    def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs):
        """A copy with some fields replaced (the abstract device kept unless given)."""
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types, **kwargs)


def _abstract_mesh(axis_sizes, axis_names, axis_types, abstract_device):
    return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


class ShardingType:
    """The sharding part of an aval: a mesh and a spec naming only Explicit axes."""

    __slots__ = ("mesh", "spec", "_hash")

    def __init__(self, mesh: AbstractMesh, spec):
        self.mesh = mesh
        self.spec = PartitionSpec(*spec)
        self._hash = hash((mesh, tuple(self.spec)))

    @property
    def is_replicated(self) -> bool:
        return all(p is None for p in self.spec)

    def __eq__(self, other):
        return isinstance(other, ShardingType) and self.mesh == other.mesh and tuple(self.spec) == tuple(other.spec)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        # JAX's aval sharding is a NamedSharding over the abstract mesh: printed as one
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def with_spec(self, spec) -> "ShardingType":
        return ShardingType(self.mesh, spec)


def explicit_only(mesh: AbstractMesh, spec, ndim: int) -> ShardingType:
    """The type-level sharding of an array placed with ``spec`` on ``mesh``."""
    spec = tuple(spec) + (None,) * (ndim - len(spec))
    out = []
    for p in spec:
        names = () if p is None else (p if isinstance(p, tuple) else (p,))
        kept = tuple(n for n in names if mesh.axis_type(n) is AxisType.Explicit)
        out.append(None if not kept else (kept[0] if len(kept) == 1 else kept))
    return ShardingType(mesh, out)


def shape_sharding_str(shape, spec) -> str:
    out = []
    for size, p in zip(shape, spec):
        if p is None:
            out.append(f"{size}")
        elif isinstance(p, tuple):
            out.append(f"{size}@({','.join(p)})")
        else:
            out.append(f"{size}@{p}")
    return ",".join(out)
