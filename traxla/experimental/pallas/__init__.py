"""``traxla.experimental.pallas`` (``jax.experimental.pallas``): Pallas kernels, the part a
CPU can run.

A kernel is a Python function of refs; :func:`pallas_call` runs it once per point of a
``grid``, each input and output sliced into blocks by a :class:`BlockSpec`. As in JAX, on
the CPU backend only interpret mode runs (``interpret=True``, or any ``pallas_call`` under
``pltpu.force_tpu_interpret_mode()``); without it the call raises JAX's ``ValueError: Only
interpret mode is supported on CPU backend.``. Interpret mode here runs the grid as a Python
loop of ordinary traxla operations on refs (``jit``, ``grad``, ``vmap`` see those
operations), one invocation at a time: kernel refs index with ints, slices and ``pl.ds``
(traced starts), DMAs complete when they start, semaphores count (see ``kernel_refs``,
``tpu_primitives``). JAX's own kernels (``jax.experimental.pallas.ops``) run this way under
the drop-in. Unlike JAX, an interpreted ``pallas_call`` is not one ``pallas_call`` equation
in a jaxpr: ``make_jaxpr`` shows the operations of its interpretation. Without
``interpret=True`` the kernel compiles for a TPU (Mosaic, through traxla's own lowering:
``traxla/experimental/pallas/mosaic_call.py`` and ``traxla/lowering/mosaic/``), as one
``pallas_call`` equation; GPUs (Triton, Mosaic GPU) raise ``NotImplementedError``."""
from traxla.experimental.pallas.core import (ANY, HOST, BlockSpec, Buffered, GridSpec,  # noqa: F401
                                             MemoryRef, MemorySpace, RevisitMode,
                                             Squeezed, cdiv, no_block_spec, num_programs,
                                             pallas_call, program_id, squeezed, when)
from traxla.experimental.pallas.kernel_refs import Slice, ds, dslice, run_scoped  # noqa: F401
from traxla.experimental.pallas.helpers import (CostEstimate, align_to, debug_print,  # noqa: F401
                                                empty, empty_like, estimate_cost, loop,
                                                multiple_of, next_power_of_2, reciprocal,
                                                strides_from_shape)
from traxla.experimental.pallas.tpu_primitives import (DeviceIdType, semaphore_read,  # noqa: F401
                                                       semaphore_signal, semaphore_wait)
from traxla.experimental.pallas.surface import (BlockDim, Blocked, BoundedSlice,  # noqa: F401
                                                CompilerParams, Element, Indirect, broadcast_to,
                                                core_map, debug_check, delay, empty_ref_like,
                                                enable_debug_checks, enable_poison_buffers,
                                                get_global, kernel, lower_as_mlir,
                                                pallas_call_p, pallas_export_experimental,
                                                run_state, select_ref, semaphore, with_scoped)

__all__ = ["ANY", "HOST", "BlockDim", "BlockSpec", "Blocked", "BoundedSlice", "Buffered",
           "CompilerParams", "CostEstimate", "DeviceIdType", "Element", "GridSpec", "Indirect",
           "MemoryRef", "MemorySpace", "RevisitMode", "Slice", "Squeezed", "align_to",
           "broadcast_to", "cdiv", "core_map", "debug_check", "debug_print", "delay", "ds",
           "dslice", "empty", "empty_like", "empty_ref_like", "enable_debug_checks",
           "enable_poison_buffers", "estimate_cost", "get_global", "kernel", "loop",
           "lower_as_mlir", "multiple_of", "next_power_of_2", "no_block_spec", "num_programs",
           "pallas_call", "pallas_call_p", "pallas_export_experimental", "program_id",
           "reciprocal", "run_scoped", "run_state", "select_ref", "semaphore", "semaphore_read",
           "semaphore_signal", "semaphore_wait", "squeezed", "strides_from_shape", "when",
           "with_scoped"]
