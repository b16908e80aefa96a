"""``traxla.experimental.pallas.tpu`` (``jax.experimental.pallas.tpu``): the TPU
specifications of a Pallas kernel (memory spaces, compiler parameters, grid dimension
semantics, scalar prefetch) and its TPU operations. A compiled ``pallas_call`` (Mosaic)
honours the memory spaces, ``dimension_semantics``, ``vmem_limit_bytes`` and scalar
prefetch; interpret mode (``interpret=True`` or under ``force_tpu_interpret_mode()``; see
``traxla.experimental.pallas``) accepts them, and there local DMAs and semaphores run (see
``tpu_primitives``). Compiled kernels take refs left in HBM (``pl.ANY``, ``pltpu.HBM``),
DMAs (local, and remote inside a ``shard_map``), DMA, regular and barrier semaphores and
``pl.run_scoped`` (``mosaic_memory``), and pipelines of DMAs inside a kernel
(``emit_pipeline``, ``tpu_pipeline``); the TPU PRNG, MXU operations and core meshes raise
``NotImplementedError`` naming the capability."""
import dataclasses
import enum
from typing import Any as _Any

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray as _ShapedArray
from traxla.experimental.pallas.core import (GridSpec as _GridSpec, MemoryRef as _MemoryRef,
                                             no_block_spec as _no_block_spec)

from traxla.experimental.pallas.interpret_mode import (  # noqa: F401
    InterpretParams, force_tpu_interpret_mode, reset_tpu_interpret_mode_state,
    set_tpu_interpret_mode)
from traxla.experimental.pallas.tpu_primitives import (  # noqa: F401
    async_copy, async_remote_copy, bitcast, get_barrier_semaphore, load, make_async_copy,
    make_async_remote_copy, roll, store, sync_copy, touch)
from traxla.experimental.pallas.tpu_pipeline import (  # noqa: F401
    BufferedRef, BufferedRefBase, BufferType, Tiling)
from traxla.experimental.pallas.tpu_pipeline_schedule import (  # noqa: F401
    emit_pipeline, emit_pipeline_with_allocations)
from traxla.experimental.pallas.unsupported import (unsupported_class as _uclass,
                                                    unsupported_function as _ufunction)

__all__ = ["ARBITRARY", "BufferType", "BufferedRef", "BufferedRefBase", "CMEM",
           "CORE_PARALLEL", "ChipVersion", "CompilerParams", "CoreType",
           "GridDimensionSemantics", "HBM", "InterpretParams", "LoweringException",
           "MemorySpace", "PARALLEL", "PrefetchScalarGridSpec", "SEMAPHORE", "SMEM",
           "SUBCORE_PARALLEL", "SemaphoreType", "SideEffectType", "Tiling", "TpuInfo", "VMEM",
           "VMEM_SHARED", "async_copy", "async_remote_copy", "bitcast", "core_barrier",
           "create_tensorcore_mesh", "dma_semaphore", "einshape", "emit_pipeline",
           "emit_pipeline_with_allocations", "force_tpu_interpret_mode",
           "get_barrier_semaphore", "get_tpu_info", "get_tpu_info_for_chip", "is_tpu_device",
           "load", "make_async_copy", "make_async_remote_copy", "matmul_acc_lhs", "matmul_pop",
           "matmul_push_rhs", "pack_elementwise", "prng_random_bits", "prng_seed",
           "reset_tpu_interpret_mode_state", "roll", "run_on_first_core", "sample_block",
           "set_tpu_interpret_mode", "stateful_bernoulli", "stateful_bits", "stateful_normal",
           "stateful_uniform", "stochastic_round", "store", "sync_copy", "to_pallas_key",
           "touch", "trace_value", "unpack_elementwise", "with_memory_space_constraint"]


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
    has_side_effects: _Any = False
    flags: _Any = None
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
        return _MemoryRef(ty, memory_space=self)

    def __call__(self, shape, dtype):
        return self.from_type(_ShapedArray(tuple(shape), dtypes.canonicalize(np.dtype(dtype))))


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
        return _MemoryRef((self, tuple(shape)), MemorySpace.SEMAPHORE)


@dataclasses.dataclass(init=False, kw_only=True, unsafe_hash=True)
class PrefetchScalarGridSpec(_GridSpec):
    """A grid spec whose first ``num_scalar_prefetch`` operands are passed whole, before
    the grid indices, to every index map and, as refs, first to the kernel."""
    num_scalar_prefetch: int

    def __init__(self, num_scalar_prefetch, grid=(), in_specs=_no_block_spec,
                 out_specs=_no_block_spec, scratch_shapes=()):
        super().__init__(grid, in_specs, out_specs, scratch_shapes)
        self.num_scalar_prefetch = num_scalar_prefetch
        self.scratch_shapes = tuple(scratch_shapes)


class dma_semaphore:
    """The DMA semaphore dtype (never instantiated)."""

    def __init__(self):
        raise TypeError("pltpu.dma_semaphore is a dtype marker and is never instantiated")


class CoreType(enum.Enum):
    TC = "tc"
    SC_SCALAR_SUBCORE = "sc_scalar_subcore"
    SC_VECTOR_SUBCORE = "sc_vector_subcore"


class ChipVersion(enum.Enum):
    TPU_V2 = "v2"
    TPU_V3 = "v3"
    TPU_V4I = "v4i"
    TPU_V4 = "v4"
    TPU_V5E = "v5e"
    TPU_V5P = "v5p"
    TPU_V6E = "v6e"
    TPU_7X = "7x"


class LoweringException(Exception):
    """Raised when a Pallas kernel cannot be lowered for the TPU (Mosaic)."""


def einshape(equation: str, value, **sizes):
    """``einshape("ab->ba", x)``: reshapes and transposes by an einsum-like equation of
    single-letter axes, with ``(ab)`` groups merged or split (sizes given by name)."""
    import re
    import traxla.numpy as jnp
    lhs, rhs = (side.replace(" ", "") for side in equation.split("->"))

    def parse(side):
        return [tuple(g[1:-1]) if g.startswith("(") else (g,)
                for g in re.findall(r"\([a-z]+\)|[a-z]", side)]

    lgroups, rgroups = parse(lhs), parse(rhs)
    if len(lgroups) != value.ndim:
        raise ValueError(f"einshape: {lhs!r} names {len(lgroups)} axes; the value has "
                         f"{value.ndim}")
    known = dict(sizes)
    for group, n in zip(lgroups, value.shape):
        unknown = [a for a in group if a not in known]
        rest = int(np.prod([known[a] for a in group if a in known]))
        if len(unknown) > 1:
            raise ValueError(f"einshape: give the sizes of {unknown[1:]}")
        if unknown:
            known[unknown[0]] = n // rest
    flat = [a for g in lgroups for a in g]
    x = value.reshape([known[a] for a in flat])
    order = [a for g in rgroups for a in g]
    x = jnp.transpose(x, [flat.index(a) for a in order])
    return x.reshape([int(np.prod([known[a] for a in g])) for g in rgroups])


_HW = "TPU hardware queries (traxla's Pallas runs in interpret mode)"
_PRNG = "the TPU's stateful PRNG in Pallas kernels"
_MXU = "explicit MXU operations"
_CORES = "meshes of TPU cores"
TpuInfo = _uclass("pallas.tpu.TpuInfo", _HW)
get_tpu_info = _ufunction("pallas.tpu.get_tpu_info", _HW)
get_tpu_info_for_chip = _ufunction("pallas.tpu.get_tpu_info_for_chip", _HW)


def is_tpu_device() -> bool:
    """Whether the default device is a TPU."""
    from traxla.runtime.backend import default_backend
    return default_backend() == "tpu"


core_barrier = _ufunction("pallas.tpu.core_barrier", _CORES)
create_tensorcore_mesh = _ufunction("pallas.tpu.create_tensorcore_mesh", _CORES)
run_on_first_core = _ufunction("pallas.tpu.run_on_first_core", _CORES)
matmul_push_rhs = _ufunction("pallas.tpu.matmul_push_rhs", _MXU)
matmul_acc_lhs = _ufunction("pallas.tpu.matmul_acc_lhs", _MXU)
matmul_pop = _ufunction("pallas.tpu.matmul_pop", _MXU)
_compiled_prng_seed = _ufunction("pallas.tpu.prng_seed", _PRNG)
_compiled_prng_random_bits = _ufunction("pallas.tpu.prng_random_bits", _PRNG)


def _interpreted_prng(name):
    """The kernel's interpret mode, or the error JAX's gives for the TPU's PRNG outside
    TPU interpret mode (compiled kernels: traxla's Mosaic lowering lacks it; JAX's generic
    ``interpret=True``: no CPU lowering)."""
    from traxla.experimental.pallas.interpret_mode import kernel_interpret_mode
    mode = kernel_interpret_mode()
    if mode == "generic":
        from traxla.runtime.backend import default_backend
        raise NotImplementedError(f"MLIR translation rule for primitive '{name}' not found "
                                  f"for platform {default_backend()}")
    return mode


def prng_seed(*seeds):
    """Seeds the TPU core's PRNG. JAX's TPU interpret mode does not simulate that PRNG:
    seeding there has no effect, and so it has none in traxla's interpret mode."""
    if _interpreted_prng("prng_seed") is None:
        return _compiled_prng_seed(*seeds)
    for s in seeds:
        from traxla import lax as _lax
        if not dtypes.is_int(_lax.dtype_of(s)):
            raise TypeError(f"prng_seed takes integer seeds, got {_lax.dtype_of(s)}")
    return None


def prng_random_bits(shape):
    """``int32[shape]`` bits of the TPU core's PRNG. In TPU interpret mode JAX gives zeros
    (its interpreter does not simulate the PRNG: a TODO of JAX's), and so does traxla's."""
    if _interpreted_prng("prng_random_bits") is None:
        return _compiled_prng_random_bits(shape)
    import traxla.numpy as _jnp
    return _jnp.zeros(tuple(shape), _jnp.int32)


sample_block = _ufunction("pallas.tpu.sample_block", _PRNG)
stateful_bernoulli = _ufunction("pallas.tpu.stateful_bernoulli", _PRNG)
stateful_bits = _ufunction("pallas.tpu.stateful_bits", _PRNG)
stateful_normal = _ufunction("pallas.tpu.stateful_normal", _PRNG)
stateful_uniform = _ufunction("pallas.tpu.stateful_uniform", _PRNG)
to_pallas_key = _ufunction("pallas.tpu.to_pallas_key", _PRNG)
stochastic_round = _ufunction("pallas.tpu.stochastic_round",
                                        "stochastic rounding in Pallas kernels")
pack_elementwise = _ufunction("pallas.tpu.pack_elementwise",
                                        "packing sub-32-bit values in Pallas kernels")
unpack_elementwise = _ufunction("pallas.tpu.unpack_elementwise",
                                          "unpacking sub-32-bit values in Pallas kernels")
trace_value = _ufunction("pallas.tpu.trace_value", "TPU kernel value tracing")


def with_memory_space_constraint(x, memory_space):
    """Asks that ``x`` live in ``memory_space`` (a placement hint: ``x`` itself)."""
    return x


_deprecated = {"semaphore_read", "semaphore_signal", "semaphore_wait", "DeviceIdType",
               "semaphore", "HOST"}


from traxla.experimental.pallas import tpu_core as core  # noqa: E402,F401  (as JAX's pltpu.core)


def __getattr__(name):  # JAX's deprecated aliases of pl names
    if name in _deprecated:
        import warnings
        warnings.warn(f"pltpu.{name} is deprecated, use pl.{name} instead.",
                      DeprecationWarning, stacklevel=2)
        from traxla.experimental import pallas as pl
        return getattr(pl, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
