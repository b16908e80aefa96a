"""``traxla.experimental.pallas`` (``jax.experimental.pallas``): Pallas kernels, the part a
CPU can run.

A kernel is a Python function of refs; :func:`pallas_call` runs it once per point of a
``grid``, each input and output sliced into blocks by a :class:`BlockSpec`. As in JAX, on
the CPU backend only interpret mode runs (``interpret=True``); without it the call raises
JAX's ``ValueError: Only interpret mode is supported on CPU backend.``. Interpret mode
here runs the grid as a Python loop of ordinary traxla operations on refs (``jit``,
``grad``, ``vmap`` see those operations), with ``program_id``, ``num_programs`` and
``when``; blocks are ``int``/``None`` dimensions with their index map (JAX's ``Blocked``
and squeezed dimensions). Unlike JAX, an interpreted ``pallas_call`` is not one
``pallas_call`` equation in a jaxpr: ``make_jaxpr`` shows the operations of its
interpretation. Without ``interpret=True`` the kernel compiles for a TPU (Mosaic, through
traxla's own lowering: ``traxla/experimental/pallas/mosaic_call.py`` and
``traxla/lowering/mosaic/``), as one ``pallas_call`` equation; GPUs (Triton, Mosaic GPU)
raise ``NotImplementedError``."""
from traxla.experimental.pallas.core import (ANY, HOST, BlockSpec, Buffered, GridSpec,  # noqa: F401
                                             MemoryRef, MemorySpace, NoBlockSpec, RevisitMode,
                                             Squeezed, cdiv, no_block_spec, num_programs,
                                             pallas_call, program_id, squeezed, when)

__all__ = ["ANY", "HOST", "BlockSpec", "Buffered", "GridSpec", "MemoryRef", "MemorySpace",
           "RevisitMode", "Squeezed", "cdiv", "no_block_spec", "num_programs", "pallas_call",
           "program_id", "squeezed", "when"]
