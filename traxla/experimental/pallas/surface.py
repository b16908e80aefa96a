"""The rest of ``jax.experimental.pallas``'s public names: block dimension kinds, the
``CompilerParams`` protocol, debug-check switches, ``run_state``, ``broadcast_to``, and the
names whose capability traxla lacks (meshes of cores, exporting or lowering a kernel to
MLIR), which raise ``NotImplementedError`` when used."""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Protocol

from traxla import tree_util
from traxla.ir.rules.pallas import pallas_call_p  # noqa: F401 (the compiled call's primitive)
from traxla.state.ref import new_ref
import traxla.numpy as jnp
from traxla.experimental.pallas.core import Squeezed
from traxla.experimental.pallas.unsupported import unsupported_function

__all__ = ["BlockDim", "Blocked", "BoundedSlice", "CompilerParams", "Element", "Indirect",
           "broadcast_to", "core_map", "debug_check", "delay", "empty_ref_like",
           "enable_debug_checks", "enable_poison_buffers", "get_global", "kernel",
           "lower_as_mlir", "pallas_call_p", "pallas_export_experimental", "run_state",
           "select_ref", "semaphore", "with_scoped"]


@dataclasses.dataclass(frozen=True)
class Element:
    """A block dimension indexed by an element offset (not a block index)."""
    block_size: int
    padding: tuple = (0, 0)

    def __str__(self):
        if self.padding == (0, 0):
            return f"Element({self.block_size})"
        return f"Element({self.block_size}, padding={self.padding})"


@dataclasses.dataclass(frozen=True)
class Blocked:
    """The default kind of block dimension: ``block_size`` elements, indexed by block."""
    block_size: int

    def __str__(self):
        return f"Blocked({self.block_size})"


@dataclasses.dataclass(frozen=True)
class BoundedSlice:
    """A dimension whose index map returns a ``pl.ds`` of at most ``block_size``."""
    block_size: int


@dataclasses.dataclass(frozen=True)
class Indirect:
    """A dimension indexed by an array of indices (a gather/scatter)."""
    block_size: int

    def __repr__(self):
        return f"Indirect({self.block_size})"


BlockDim = Element | Squeezed | Blocked | BoundedSlice | Indirect


class CompilerParams(Protocol):
    """Base class for compiler parameters (subclasses are dataclasses)."""


class semaphore:
    """The regular semaphore dtype (never instantiated)."""

    def __init__(self):
        raise TypeError("pl.semaphore is a dtype marker and is never instantiated")


class _Flag:
    """A boolean switch with ``.value`` that is also a context manager when called
    (``with pl.enable_debug_checks(True): ...``), like JAX's config states."""

    def __init__(self, name: str, default: bool = False):
        self.name, self.value = name, default

    @contextlib.contextmanager
    def __call__(self, value: bool = True):
        prev, self.value = self.value, bool(value)
        try:
            yield
        finally:
            self.value = prev

    def __bool__(self):
        return bool(self.value)

    def __repr__(self):
        return f"<{self.name}: {self.value}>"


enable_debug_checks = _Flag("jax_pallas_enable_debug_checks")
enable_poison_buffers = _Flag("jax_pallas_poison_buffers")


def debug_check(condition, message):
    """Checks ``condition`` (``checkify.debug_check``) when ``pl.enable_debug_checks`` is
    set, otherwise does nothing."""
    if not enable_debug_checks.value:
        return
    from traxla.experimental import checkify
    checkify.debug_check(condition, message)


def delay(nanos):
    """Waits for ``nanos`` nanoseconds on the device (nothing observable in interpret
    mode, where the kernel's invocations run in order)."""


def broadcast_to(a, shape):
    """``jnp.broadcast_to`` inside a kernel."""
    return jnp.broadcast_to(a, shape)


def run_state(f):
    """``run_state(f)(init)``: runs ``f`` on refs holding ``init`` and returns their final
    values."""
    def wrapped(init):
        refs = tree_util.tree_map(new_ref, init)
        f(refs)
        return tree_util.tree_map(lambda r: r[...], refs)
    return wrapped


def empty_ref_like(x):
    """An array ref with the shape and dtype of ``x`` (contents unspecified: zeros)."""
    inner = getattr(x, "inner_aval", x)
    return new_ref(jnp.zeros(inner.shape, inner.dtype))



_MESH = "Pallas kernels over a mesh of cores (core_map, pl.kernel)"
core_map = unsupported_function("pallas.core_map", _MESH)
kernel = unsupported_function("pallas.kernel", _MESH)
get_global = unsupported_function("pallas.get_global", "global (cross-core) Pallas buffers")
with_scoped = unsupported_function("pallas.with_scoped", _MESH)
select_ref = unsupported_function("pallas.select_ref", "selecting among kernel refs")
lower_as_mlir = unsupported_function("pallas.lower_as_mlir", "lowering a Pallas kernel "
                                     "to MLIR (Mosaic, Triton)")
pallas_export_experimental = unsupported_function(
    "pallas.pallas_export_experimental", "exporting Pallas kernels")
