"""``Layout`` (an array's physical dimension order and tiling) and ``Format`` (a layout with
its sharding), as ``jax.experimental.layout`` has them.

traxla compiles every array in XLA's default layout: ``Layout.AUTO`` (the compiler's
choice) is that layout, compiled executables report it (``input_formats``), and a
``Format`` in ``jit``'s shardings lays arrays out by its sharding; another layout is
refused."""
from __future__ import annotations

from traxla import tree_util
from traxla.primitives import aval_of
from traxla.runtime.array import ArrayImpl
from traxla.sharding import Sharding


class AutoLayoutSingleton:
    def __repr__(self):
        return "AUTO"


AutoLayout = AutoLayoutSingleton()


class Layout:
    """``major_to_minor``: dimensions from the slowest varying; ``tiling``: XLA tiles."""

    AUTO = AutoLayout

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def __hash__(self):
        return hash((self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits))

    def __eq__(self, other):
        return (isinstance(other, Layout) and self.major_to_minor == other.major_to_minor
                and self.tiling == other.tiling
                and self.sub_byte_element_size_in_bits == other.sub_byte_element_size_in_bits)

    def update(self, **kwargs) -> "Layout":
        return Layout(kwargs.get("major_to_minor", self.major_to_minor),
                      kwargs.get("tiling", self.tiling),
                      kwargs.get("sub_byte_element_size_in_bits",
                                 self.sub_byte_element_size_in_bits))

    @staticmethod
    def from_pjrt(xla_layout) -> "Layout":
        """The layout jaxlib reports (an xla Layout: minor to major, tiles, element bits)."""
        return Layout(tuple(xla_layout.minor_to_major()[::-1]),
                      tuple(map(tuple, xla_layout.tiling())), xla_layout.element_size_in_bits())

    def check_compatible_aval(self, aval_shape):
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError("Length of major_to_minor and the rank of the value should match."
                             f" Got major_to_minor={self.major_to_minor} and "
                             f"shape={aval_shape}")


class Format:
    """A layout (``None``, ``Layout.AUTO`` or a ``Layout``) with a sharding."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                "Sharding has to be concrete when layout is of type"
                f" {type(layout)}. Please pass a `jax.sharding.NamedSharding` or"
                " `jax.sharding.SingleDeviceSharding` to the sharding argument. Got"
                f" sharding {sharding}")
        if not isinstance(layout, (Layout, type(None), AutoLayoutSingleton)):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are "
                f"`None`, `Layout.AUTO` or an instance of `Layout`. Got {layout} of type "
                f"{type(layout)}")
        if not isinstance(sharding, (Sharding, type(None))):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values are "
                f"`None` or an instance of `jax.Sharding`. Got {sharding} of type "
                f"{type(sharding)}")
        self.layout = layout
        self.sharding = sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __eq__(self, other):
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)


def _is_default(layout, ndim) -> bool:
    return (layout.major_to_minor == tuple(range(ndim)) and not layout.tiling
            and not layout.sub_byte_element_size_in_bits)


def _refuse(layout):
    raise NotImplementedError(
        f"{layout}: traxla compiles every array in XLA's default layout (major_to_minor "
        "in dimension order, no tiling); use Layout.AUTO or that layout.")


def sharding_of_format(x):
    """A ``jit`` in_shardings/out_shardings entry with its Format unwrapped: the sharding
    (None: unconstrained); a layout other than the default one (or AUTO) is refused."""
    if not isinstance(x, Format):
        return x
    if isinstance(x.layout, Layout) and not _is_default(x.layout, len(x.layout.major_to_minor)):
        _refuse(x.layout)
    return x.sharding


def with_layout_constraint(x, layout):
    """``x`` in ``layout`` (JAX's layout constraint on an intermediate): traxla keeps every
    array in the default layout, so that layout is ``x`` itself and others are refused."""
    def one(leaf):
        if isinstance(layout, Layout) and not _is_default(layout, aval_of(leaf).ndim):
            _refuse(layout)
        return leaf
    return tree_util.tree_map(one, x)


def _array_format(self):
    """``Array.format``: the device layout of the array's buffer with its sharding, as
    JAX's (a deleted array, or a backend without layouts: no layout)."""
    if self.is_deleted():
        return Format(None, self.sharding)
    try:
        xla_layout = self._buf._pjrt_layout._xla_layout()
    except Exception as e:  # noqa: BLE001  (UNIMPLEMENTED on some backends, as JAX's)
        if str(e).startswith("UNIMPLEMENTED"):
            return Format(None, self.sharding)
        raise
    layout = Layout(xla_layout.minor_to_major()[::-1], xla_layout.tiling(),
                    xla_layout.element_size_in_bits())
    return Format(layout, self.sharding)


ArrayImpl.format = property(_array_format)

__all__ = ["Format", "Layout", "with_layout_constraint"]
