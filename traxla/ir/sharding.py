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


def _check_ur(partitions, unreduced, reduced):
    """JAX's checks of the ``unreduced``/``reduced`` sets against each other and the entries."""
    if None in unreduced:
        raise ValueError("unreduced cannot contain None. All elements in unreduced should refer"
                         " to the mesh axes.")
    if None in reduced:
        raise ValueError("reduced cannot contain None. All elements in reduced should refer"
                         " to the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                         f"Got unreduced: {unreduced} and reduced: {reduced}")
    for partition in partitions:
        for p in partition if isinstance(partition, tuple) else (partition,):
            for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if p in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {name} axes passed to PartitionSpec. "
                        f"Got partitions: {partitions} and {name} axes: {axes}")


def _as_axis_set(value, name):
    if isinstance(value, frozenset):
        return value
    if not isinstance(value, set):
        raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or `set`. "
                        f"Got type {value}")
    return frozenset(value)


_NO_AXES = frozenset()
# Whether any spec reduced over some axes was made in this process: until one is, binary
# operations need not look for a reduced operand (JAX's ``insert_reduced_reshard``).
REDUCED_SEEN = [False]


class PartitionSpec(tuple):
    """One entry per array dimension: None, a mesh axis name, a tuple of names, or
    ``UNCONSTRAINED``; and, as JAX's, the mesh axes over which the value is ``unreduced``
    (each device holds a partial sum) or ``reduced`` (replicated, with unreduced
    cotangents)."""

    UNCONSTRAINED = _UNCONSTRAINED_PARTITION
    unreduced = _NO_AXES  # (set on the instance only when not empty)
    reduced = _NO_AXES

    def __new__(cls, *partitions, unreduced=_NO_AXES, reduced=_NO_AXES):
        self = tuple.__new__(cls, tuple(p if not isinstance(p, list) else tuple(p)
                                        for p in partitions))
        if unreduced or reduced or type(unreduced) is not frozenset or type(reduced) is not frozenset:
            unreduced = _as_axis_set(unreduced, "unreduced")
            reduced = _as_axis_set(reduced, "reduced")
            if unreduced or reduced:
                _check_ur(tuple(self), unreduced, reduced)
                self.unreduced, self.reduced = unreduced, reduced
                if reduced:
                    REDUCED_SEEN[0] = True
        return self

    @property
    def partitions(self):
        """The per-dimension entries (JAX's ``spec.partitions``)."""
        return tuple(self)

    def __repr__(self):
        pr = ", ".join(repr(p) for p in self) + ("," if len(self) == 1 else "")
        if not self.unreduced and not self.reduced:
            return "P(" + pr + ")"
        ur = []
        if self.unreduced:
            ur.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            ur.append(f"reduced={set(self.reduced)!r}")
        pr = "" if not pr else f"{pr} " if pr.endswith(",") else f"{pr}, "
        return f"P({pr}{', '.join(ur)})"

    __str__ = __repr__

    def __eq__(self, other):
        same = tuple.__eq__(self, other)
        if same is NotImplemented or not same:
            return same
        return (self.unreduced == getattr(other, "unreduced", _NO_AXES)
                and self.reduced == getattr(other, "reduced", _NO_AXES))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        h = tuple.__hash__(self)
        if self.unreduced or self.reduced:
            h = hash((h, self.unreduced, self.reduced))
        return h

    def __getnewargs_ex__(self):  # pickled and copied as the entries (not one tuple of them)
        return tuple(self), {"unreduced": self.unreduced, "reduced": self.reduced}

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self, *other, unreduced={*self.unreduced, *other.unreduced},
                                 reduced={*self.reduced, *other.reduced})
        if isinstance(other, tuple):
            for name in ("unreduced", "reduced"):
                if getattr(self, name):
                    raise TypeError(f"other {other} cannot be of instance `tuple` when self "
                                    f"{self} has {name} in `__add__` of PartitionSpec.")
            return PartitionSpec(*self, *other)
        return NotImplemented

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        for name in ("unreduced", "reduced"):
            if getattr(self, name):
                raise TypeError(f"other {other} cannot be of instance `tuple` when self "
                                f"{self} has {name} in `__radd__` of PartitionSpec.")
        return PartitionSpec(*other, *self)

    def update(self, partitions=None, unreduced=None, reduced=None):
        """A copy with the entries, the unreduced or the reduced axes replaced (JAX's)."""
        return PartitionSpec(*(tuple(self) if partitions is None else partitions),
                             unreduced=self.unreduced if unreduced is None else unreduced,
                             reduced=self.reduced if reduced is None else reduced)

    def with_ur_of(self, other):
        """These entries with ``other``'s unreduced and reduced axes."""
        if not other.unreduced and not other.reduced and not self.unreduced and not self.reduced:
            return self
        return self.update(unreduced=other.unreduced, reduced=other.reduced)

    def to_tangent_spec(self):
        return self

    def to_ct_spec(self):
        """The cotangent's spec: unreduced and reduced swap (JAX's)."""
        if not self.unreduced and not self.reduced:
            return self
        return self.update(unreduced=self.reduced, reduced=self.unreduced)

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
    """The sharding part of an aval: a mesh and a spec naming only Explicit axes (with,
    as JAX's, the axes over which the value is unreduced or reduced)."""

    __slots__ = ("mesh", "spec", "_hash")

    def __init__(self, mesh: AbstractMesh, spec):
        self.mesh = mesh
        if type(spec) is PartitionSpec:
            self.spec = spec
        else:
            self.spec = PartitionSpec(*spec)
        self._hash = hash((mesh, self.spec))

    @property
    def is_replicated(self) -> bool:
        """Every entry None and neither unreduced nor reduced: the type prints no sharding."""
        spec = self.spec
        return all(p is None for p in spec) and not spec.unreduced and not spec.reduced

    @property
    def unreduced(self) -> frozenset:
        return self.spec.unreduced

    @property
    def reduced(self) -> frozenset:
        return self.spec.reduced

    def __eq__(self, other):
        return isinstance(other, ShardingType) and self.mesh == other.mesh and self.spec == other.spec

    def __hash__(self):
        return self._hash

    def __repr__(self):
        # JAX's aval sharding is a NamedSharding over the abstract mesh: printed as one
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def with_spec(self, spec) -> "ShardingType":
        return ShardingType(self.mesh, spec)

    def with_ur(self, unreduced, reduced) -> "ShardingType":
        """The same entries, unreduced and reduced over these axes."""
        spec = self.spec
        if spec.unreduced == unreduced and spec.reduced == reduced:
            return self
        return ShardingType(self.mesh, spec.update(unreduced=unreduced, reduced=reduced))

    def to_ct(self) -> "ShardingType":
        """A cotangent's sharding: unreduced and reduced swap."""
        spec = self.spec
        if not spec.unreduced and not spec.reduced:
            return self
        return ShardingType(self.mesh, spec.to_ct_spec())


def explicit_only(mesh: AbstractMesh, spec, ndim: int) -> ShardingType:
    """The type-level sharding of an array placed with ``spec`` on ``mesh``."""
    unreduced = getattr(spec, "unreduced", _NO_AXES)
    reduced = getattr(spec, "reduced", _NO_AXES)
    spec = tuple(spec) + (None,) * (ndim - len(spec))
    out = []
    for p in spec:
        names = () if p is None else (p if isinstance(p, tuple) else (p,))
        kept = tuple(n for n in names if mesh.axis_type(n) is AxisType.Explicit)
        out.append(None if not kept else (kept[0] if len(kept) == 1 else kept))
    return ShardingType(mesh, PartitionSpec(*out, unreduced=unreduced, reduced=reduced))


def ur_str(mesh, vma, unreduced, reduced) -> str:
    """JAX's ``{V:x, U:y, R:z}`` suffix of a type (each set in mesh order)."""
    if not vma and not unreduced and not reduced:
        return ""
    parts = []
    for prefix, axes in (("V", vma), ("U", unreduced), ("R", reduced)):
        if axes:
            names = [n for n in mesh.axis_names if n in axes] if mesh is not None else list(axes)
            parts.append(f"{prefix}:{names[0] if len(names) == 1 else '(' + ','.join(names) + ')'}")
    return "{" + ", ".join(parts) + "}"


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
