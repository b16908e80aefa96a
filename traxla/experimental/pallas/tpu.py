"""``traxla.experimental.pallas.tpu`` (``jax.experimental.pallas.tpu``): the TPU
specifications of a Pallas kernel (memory spaces, compiler parameters, grid dimension
semantics, scalar prefetch). A compiled ``pallas_call`` (Mosaic) honours the memory
spaces, ``dimension_semantics``, ``vmem_limit_bytes`` and scalar prefetch; interpret mode
accepts them and ignores the hints. Semaphores and DMAs are not implemented."""
from __future__ import annotations

import dataclasses
import enum
from typing import Any

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.experimental.pallas.core import GridSpec, MemoryRef, no_block_spec

__all__ = ["ARBITRARY", "CORE_PARALLEL", "CompilerParams", "GridDimensionSemantics", "HBM",
           "MemorySpace", "PARALLEL", "PrefetchScalarGridSpec", "SMEM", "SUBCORE_PARALLEL",
           "SemaphoreType", "SideEffectType", "VMEM", "VMEM_SHARED", "CMEM", "SEMAPHORE"]


class GridDimensionSemantics(enum.Enum):
    PARALLEL = "parallel"
    CORE_PARALLEL = "core_parallel"
    SUBCORE_PARALLEL = "subcore_parallel"
    ARBITRARY = "arbitrary"


PARALLEL = GridDimensionSemantics.PARALLEL
CORE_PARALLEL = GridDimensionSemantics.CORE_PARALLEL
SUBCORE_PARALLEL = GridDimensionSemantics.SUBCORE_PARALLEL
ARBITRARY = GridDimensionSemantics.ARBITRARY


class SideEffectType(enum.Enum):
    PURE = "pure"
    DATAFLOW_SIDE_EFFECTING = "dataflow_side_effecting"
    SIDE_EFFECTING = "side_effecting"


@dataclasses.dataclass(frozen=True)
class CompilerParams:
    """Mosaic TPU compiler parameters (kept, as JAX keeps them; interpret mode ignores
    them)."""
    dimension_semantics: tuple | None = None
    allow_input_fusion: tuple | None = None
    vmem_limit_bytes: int | None = None
    collective_id: int | None = None
    has_side_effects: Any = False
    flags: Any = None
    internal_scratch_in_bytes: int | None = None
    serialization_format: int = 1
    disable_bounds_checks: bool = False
    disable_semaphore_checks: bool = False
    skip_device_barrier: bool = False
    allow_collective_id_without_custom_barrier: bool = False
    shape_invariant_numerics: bool = True
    use_tc_tiling_on_sc: bool | None = None
    needs_layout_passes: bool = True
    fuse_transposed_lhs_in_matmul: bool = False

    def __post_init__(self):
        for name in ("dimension_semantics", "allow_input_fusion"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, tuple(value))
        if self.flags is not None:
            object.__setattr__(self, "flags", dict(self.flags))

    replace = dataclasses.replace


class MemorySpace(enum.Enum):
    VMEM = "vmem"
    VMEM_SHARED = "vmem_shared"
    SMEM = "smem"
    CMEM = "cmem"
    SEMAPHORE = "semaphore_mem"
    HBM = "hbm"

    def __str__(self):
        return self.value

    def __repr__(self):
        return self.name

    def from_type(self, ty):
        return MemoryRef(ty, memory_space=self)

    def __call__(self, shape, dtype):
        return self.from_type(ShapedArray(tuple(shape), dtypes.canonicalize(np.dtype(dtype))))


VMEM = MemorySpace.VMEM
VMEM_SHARED = MemorySpace.VMEM_SHARED
SMEM = MemorySpace.SMEM
CMEM = MemorySpace.CMEM
SEMAPHORE = MemorySpace.SEMAPHORE
HBM = MemorySpace.HBM


class SemaphoreType(enum.Enum):
    REGULAR = "regular"
    DMA = "dma"
    BARRIER = "barrier"

    def __call__(self, shape):
        return MemoryRef((self, tuple(shape)), MemorySpace.SEMAPHORE)


@dataclasses.dataclass(init=False, kw_only=True, unsafe_hash=True)
class PrefetchScalarGridSpec(GridSpec):
    """A grid spec whose first ``num_scalar_prefetch`` operands are passed whole, before
    the grid indices, to every index map and, as refs, first to the kernel."""
    num_scalar_prefetch: int

    def __init__(self, num_scalar_prefetch, grid=(), in_specs=no_block_spec,
                 out_specs=no_block_spec, scratch_shapes=()):
        super().__init__(grid, in_specs, out_specs, scratch_shapes)
        self.num_scalar_prefetch = num_scalar_prefetch
        self.scratch_shapes = tuple(scratch_shapes)
