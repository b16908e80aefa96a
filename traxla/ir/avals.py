"""Abstract values: what the tracer knows about an array, and the jit cache key."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.sharding import ShardingType, explicit_only, shape_sharding_str, ur_str


class ShapedArray:
    """Shape, dtype and weak type of an array, with slots for placement.

    ``sharding_type`` is the type-level sharding (a ``ShardingType`` naming Explicit mesh
    axes) or ``None``; ``memory_space`` is ``None`` for device memory. Both take part in
    equality (the cache key). ``sharding`` is JAX's view of it: a ``NamedSharding`` on an
    abstract mesh, the empty mesh with a spec of ``None``s when the type names no axes.
    """

    __slots__ = ("shape", "dtype", "weak_type", "sharding_type", "memory_space", "vma", "_hash")

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None, memory_space=None,
                 vma=()):
        self.shape = tuple(shape)
        if isinstance(dtype, (type, str)):  # np.float32, "float32": as JAX, a np.dtype
            dtype = np.dtype(dtype)
        self.dtype = dtype
        self.weak_type = weak_type
        if sharding is not None and type(sharding) is not ShardingType:
            sharding = _sharding_type_of(sharding, len(self.shape))
        self.sharding_type = sharding
        self.memory_space = memory_space
        # the manual mesh axes (in mesh order) over which the value may vary, inside a
        # shard_map with check_vma: JAX's varying manual axes, printed ``f32[3]{V:i}``
        self.vma = vma
        self._hash = hash((self.shape, dtype, weak_type, sharding, memory_space, vma))

    @property
    def sharding(self):
        """As JAX's ``aval.sharding``: a NamedSharding on the abstract mesh (on the empty
        mesh, spec ``P(None, ...)``, when no Explicit axis splits the array)."""
        return _sharding_view(self)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:  # noqa: D401
        """The number of elements (a symbolic dimension expression for a symbolic shape,
        as JAX's ``math.prod``)."""
        out = 1
        for d in self.shape:
            out = d * out if not isinstance(d, (int, np.integer)) else out * int(d)
        return out

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type
                and self.sharding_type == other.sharding_type
                and self.memory_space == other.memory_space and self.vma == other.vma)

    def __hash__(self):
        return self._hash

    def update(self, shape=None, dtype=None, weak_type=None, sharding=False, vma=None):
        """A copy with fields replaced (``sharding=None`` clears it; by default it is kept
        only when the shape is; the varying manual axes are kept unless given)."""
        new_shape = self.shape if shape is None else tuple(shape)
        if sharding is False:
            sharding = self.sharding_type if new_shape == self.shape else None
        return ShapedArray(new_shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           sharding, self.memory_space, self.vma if vma is None else vma)

    def to_tangent_aval(self) -> "ShapedArray":
        """The type of this value's tangent: float0 for a non-float dtype (JAX's)."""
        dtype = dtypes.tangent_dtype(self.dtype)
        if dtype is self.dtype and not self.vma and type(self) is ShapedArray:
            return self  # (a float value's tangent has its very type: no new object)
        return ShapedArray(self.shape, dtype, self.weak_type, self.sharding_type,
                           self.memory_space)

    def to_ct_aval(self) -> "ShapedArray":
        """The type of this value's cotangent: the tangent's, with unreduced and reduced
        mesh axes swapped (JAX's ``to_ct_aval``)."""
        st = self.sharding_type
        return ShapedArray(self.shape, dtypes.tangent_dtype(self.dtype), self.weak_type,
                           st if st is None else st.to_ct(), self.memory_space)
    at_least_vspace = to_tangent_aval  # JAX's older name

    def strip_weak_type(self) -> "ShapedArray":
        return self.update(weak_type=False) if self.weak_type else self

    normalize = strip_weak_type  # JAX's name (a hijax type's state normalizes its leaves)

    # An array type as a (trivial) hijax type: one low-level value, itself (JAX's).
    is_high = has_qdd = False

    def lo_ty(self) -> list:
        return [self]

    def lower_val(self, val) -> list:
        return [val]

    def raise_val(self, val):
        return val

    def str_short(self, short_dtypes: bool = True) -> str:
        """``f32[4,8]``: the form jaxpr binders print; ``f32<host>[8@x,16@y]`` with
        an explicit sharding and a non-device memory space."""
        name = (dtypes.short_name(self.dtype) if short_dtypes or self.dtype == dtypes.float0
                else str(self.dtype))  # float0 prints as its name (JAX's dtype_to_string)
        if self.memory_space is not None and self.memory_space != "device":
            name += f"<{self.memory_space}>"
        sharding = self.sharding_type
        if sharding is not None and not sharding.is_replicated:
            out = f"{name}[{shape_sharding_str(self.shape, sharding.spec)}]"
        else:
            out = f"{name}[{','.join(map(str, self.shape))}]"
        if sharding is not None and (sharding.spec.unreduced or sharding.spec.reduced):
            spec = sharding.spec
            return out + ur_str(sharding.mesh, self.vma, spec.unreduced, spec.reduced)
        if self.vma:
            out += "{V:" + (self.vma[0] if len(self.vma) == 1 else
                            "(" + ",".join(self.vma) + ")") + "}"
        return out

    @property
    def manual_axis_type(self) -> "ManualAxisType":
        """The manual axes over which the value varies (``.varying``), as JAX's."""
        return ManualAxisType(varying=frozenset(self.vma))

    def __str__(self):
        """``float32[4,8]``: the form ``typeof`` and ``tracer.aval`` print; ``~float32[]``
        when weakly typed, as JAX's."""
        s = self.str_short(short_dtypes=False)
        return "~" + s if self.weak_type else s

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(False)}{weak})"


class ManualAxisType:
    """JAX's per-value manual axis type: the manual mesh axes over which a value is
    varying (traxla has no unreduced or reduced manual values: those stay empty)."""

    __slots__ = ("varying", "unreduced", "reduced")

    def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        for name, other in (("unreduced", unreduced), ("reduced", reduced)):
            if frozenset(varying) & frozenset(other):
                raise ValueError(f"varying and {name} cannot have common mesh axes. Got "
                                 f"varying={frozenset(varying)} and {name}={frozenset(other)}")
        self.varying = frozenset(varying)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __eq__(self, other):
        return (isinstance(other, ManualAxisType) and self.varying == other.varying
                and self.unreduced == other.unreduced and self.reduced == other.reduced)

    def __hash__(self):
        return hash((self.varying, self.unreduced, self.reduced))

    @property
    def vur(self) -> frozenset:
        return self.varying | self.unreduced | self.reduced

    def __repr__(self):
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


def _sharding_type_of(sharding, ndim: int):
    """The type-level part of a sharding given as JAX's (``ShapedArray(..., sharding=
    NamedSharding(...))``): its Explicit axes, or None when it names none."""
    mesh = getattr(sharding, "mesh", None)
    spec = getattr(sharding, "spec", None)
    if mesh is None or spec is None:
        raise TypeError(f"ShapedArray sharding must be a NamedSharding; got {sharding!r}")
    mesh = mesh.abstract_mesh
    if not mesh.explicit_axes:
        return None
    return explicit_only(mesh, spec, ndim)


def _no_view(aval):
    return aval.sharding_type


# Set by the runtime (which defines NamedSharding) to JAX's view of an aval's sharding.
_sharding_view = _no_view


def set_sharding_view(view) -> None:
    global _sharding_view
    _sharding_view = view


_interned: dict = {}


def interned(aval):
    """The one shared object equal to ``aval`` (avals are immutable): typing results and
    traced arguments are interned, so cache keys made of them compare by identity."""
    try:
        hit = _interned.get(aval)
    except TypeError:  # an aval with an unhashable part
        return aval
    if hit is None:
        # only avals of plain-int shapes are shared: (np.int64(4), 3) equals (4, 3), and
        # handing it out for every (4, 3) would leak NumPy ints into printed params
        for d in aval.shape:
            if type(d) is not int:
                return aval
        if len(_interned) >= 4096:
            _interned.clear()
        hit = _interned.setdefault(aval, aval)
    return hit


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """How a value is stored: an extended dtype's elements expand into trailing dims."""
    dtype = aval.dtype
    if isinstance(dtype, dtypes.ExtendedDType):
        return ShapedArray(aval.shape + dtype.physical_shape, dtype.physical_dtype, False,
                           aval.sharding_type, aval.memory_space, aval.vma)
    return aval


def aval_of_numpy(x: np.ndarray, weak_type: bool = False) -> ShapedArray:
    return ShapedArray(x.shape, x.dtype, weak_type)
