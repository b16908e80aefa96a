"""``jax.experimental.pallas.tpu.core``: JAX's ``jax._src.pallas.mosaic.core``, which
``pltpu`` exposes by accident of its imports; here the TPU Pallas core names traxla has, the
same objects as ``pltpu``'s (``pltpu.core.MemorySpace is pltpu.MemorySpace``)."""
from traxla.experimental.pallas.core import MemoryRef, no_block_spec  # noqa: F401
from traxla.experimental.pallas.tpu import (  # noqa: F401
    ARBITRARY, CORE_PARALLEL, PARALLEL, SUBCORE_PARALLEL, CompilerParams, CoreType,
    GridDimensionSemantics, MemorySpace, PrefetchScalarGridSpec, SemaphoreType, SideEffectType,
    create_tensorcore_mesh, dma_semaphore)
