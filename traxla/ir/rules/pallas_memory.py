"""The memory operations of a Pallas TPU kernel compiled for Mosaic: DMAs
(``dma_start``, ``dma_wait``), semaphores (``semaphore_signal``, ``semaphore_wait``,
``semaphore_read``) and scoped allocation (``run_scoped``), as JAX names them.

Each is a :class:`~traxla.ir.rules.pallas.KernelPrimitive`: only a compiled kernel's jaxpr
holds one (interpret mode runs DMAs and semaphores as traxla operations on refs). A ref
operand may be a view of a ref (``x_ref.at[pl.ds(i, 8)]``, ``sems.at[slot]``): the equation
takes the ref, then the integer operands of its indexer, and a ``RefIndexer`` per ref in
``trees`` says which is which. A semaphore is a ref whose memory space is
``"dma_semaphore"`` or ``"semaphore"`` (``pltpu.SemaphoreType.DMA`` / ``REGULAR``); its
inner aval (``i32``, of the array's shape) only gives it a shape."""
from __future__ import annotations

import numpy as np

from traxla.ir.avals import ShapedArray
from traxla.ir.effects import def_effects
from traxla.ir.rules.pallas import KernelPrimitive
from traxla.ir.rules.refs import (AbstractRef, RefChain, RefReshape,  # noqa: F401
                                  _swap_rule, is_ref_aval, ref_effect)
from traxla.ir.primitive import def_typing

SEMAPHORE_SPACES = ("dma_semaphore", "semaphore", "barrier_semaphore")


class RefKernelPrimitive(KernelPrimitive):
    """A kernel operation whose operands include refs (the ref bind hook lets it take
    them, as it lets ``get`` and ``swap``)."""
    takes_refs = True


dma_start_p = RefKernelPrimitive("dma_start", multiple_results=True)
dma_wait_p = RefKernelPrimitive("dma_wait", multiple_results=True)
semaphore_signal_p = RefKernelPrimitive("semaphore_signal", multiple_results=True)
semaphore_wait_p = RefKernelPrimitive("semaphore_wait", multiple_results=True)
semaphore_read_p = RefKernelPrimitive("semaphore_read")
run_scoped_p = RefKernelPrimitive("run_scoped", multiple_results=True)
# pltpu.store(ref, val, mask=m): JAX's masked swap (a tpu.vector_store with a mask)
masked_swap_p = RefKernelPrimitive("masked_swap")

for _p in (dma_start_p, dma_wait_p, semaphore_signal_p, semaphore_wait_p, semaphore_read_p,
           run_scoped_p, masked_swap_p):
    def_effects(_p, lambda params: frozenset({ref_effect}))


def split_refs(operands, trees, ndev=0):
    """``[(ref, index operands), ...]``, one per ``RefIndexer`` of ``trees`` (the last
    ``ndev`` operands, a remote DMA's device id, are not refs)."""
    out, k = [], 0
    for tree in trees:
        n = tree.num_operands
        out.append((operands[k], list(operands[k + 1:k + 1 + n])))
        k += 1 + n
    if k + ndev != len(operands):
        raise ValueError(f"{len(operands)} operands for the indexers {trees}")
    return out


def view_shape(ref_aval, tree) -> tuple:
    """The shape of ``ref[tree]`` (scalar integer indexers drop their dimension)."""
    if isinstance(tree, RefChain):
        return tree.link_shapes(ref_aval.shape)[-1]
    if tree.trivial:
        return tuple(ref_aval.shape)
    return tuple(d[2] if d[0] == "slice" else None if d[0] == "dsize" else d[1]
                 for d in tree.dims if d[0] != "int")


def _check_refs(name, avals, trees, ndev=0):
    for (ref, idx), tree in zip(split_refs(avals, trees, ndev), trees):
        if not is_ref_aval(ref):
            raise ValueError(f"DMA source/destination/semaphore arguments must be Refs "
                             f"({name}); got {ref}.")
        for a in idx:
            if a.shape or not np.issubdtype(a.dtype, np.integer):
                raise TypeError(f"{name}: a ref is indexed by integer scalars here; got "
                                f"{a.str_short(False)}")
    return [(ref, view_shape(ref, tree))
            for (ref, _), tree in zip(split_refs(avals, trees, ndev), trees)]


def _check_semaphore(name, sem, shape, kinds):
    if sem.memory_space not in SEMAPHORE_SPACES:
        raise ValueError(f"Cannot {name} on a non-semaphore Ref: {sem}")
    if shape:
        raise ValueError(f"Cannot {name} on a non-()-shaped semaphore: {shape}")
    if sem.memory_space not in kinds:
        if name == "dma_wait":
            raise ValueError("dma_wait requires a DMA semaphore, but got a regular semaphore."
                             " Use pl.semaphore_wait() instead.")
        raise ValueError(f"Must {name} semaphores of the following types: {kinds}. Got "
                         f"{sem.memory_space}.")


def _dma_typing(name):
    def rule(*avals, trees, priority=0, add=False, ndev=0, **_):
        if priority < 0:
            raise ValueError(f"DMA start priority must be non-negative: {priority}")
        refs = _check_refs(name, avals, trees, ndev)
        (src, src_shape), (dst, dst_shape), (sem, sem_shape) = refs[:3]
        _check_semaphore(name, sem, sem_shape, ("dma_semaphore",) if name == "dma_wait"
                         else SEMAPHORE_SPACES)
        for (src_sem, shape) in refs[3:]:  # a remote DMA's source (send) semaphore
            _check_semaphore(name, src_sem, shape, SEMAPHORE_SPACES)
        for a in avals[len(avals) - ndev:] if ndev else ():
            if a.shape or not np.issubdtype(a.dtype, np.integer):
                raise TypeError(f"{name}: a device id is an integer scalar; got "
                                f"{a.str_short(False)}")
        if len(src_shape) != len(dst_shape) or any(
                a != b for a, b in zip(src_shape, dst_shape) if a is not None and b is not None):
            raise ValueError(f"DMA source and destination must have the same shape: the "
                             f"source is {src_shape}, the destination {dst_shape}.")
        if np.dtype(src.dtype) != np.dtype(dst.dtype):
            raise ValueError(f"DMA source and destination must have the same dtype: the "
                             f"source is {src.dtype}, the destination {dst.dtype}.")
        return []
    return rule


def_typing(dma_start_p, _dma_typing("dma_start"))
def_typing(dma_wait_p, _dma_typing("dma_wait"))


def _semaphore_typing(name, kinds=("semaphore",)):
    def rule(*avals, trees, ndev=0, **_):
        avals = avals[:len(avals) - ndev]  # (semaphore_signal's device id, at the end)
        refs = _check_refs(name, avals[:len(avals) - (name != "read")], trees)
        (sem, shape), = refs
        _check_semaphore(name, sem, shape, kinds)
        if name != "read":
            value = avals[-1]
            if value.shape or not np.issubdtype(value.dtype, np.integer):
                raise TypeError(f"semaphore_{name}: the value must be an integer scalar; got "
                                f"{value.str_short(False)}")
            return []
        return ShapedArray((), np.dtype(np.int32))
    return rule


def_typing(semaphore_signal_p, _semaphore_typing("signal", ("semaphore", "barrier_semaphore")))
def_typing(semaphore_wait_p, _semaphore_typing("wait", ("semaphore", "barrier_semaphore")))
def_typing(semaphore_read_p, _semaphore_typing("read", SEMAPHORE_SPACES))


def _run_scoped_typing(*avals, jaxpr, num_consts, allocs):
    return [v.aval for v in jaxpr.jaxpr.outvars]


def_typing(run_scoped_p, _run_scoped_typing)


# ``pl.multiple_of(i * 8, 8)``: the hint a DMA's slice start (or any index) carries for
# Mosaic (``tpu.assume_multiple``); a plain value everywhere else.
multiple_of_p = KernelPrimitive("multiple_of")


def _multiple_of_typing(x, *, values):
    return x


def_typing(multiple_of_p, _multiple_of_typing)


# pltpu.get_barrier_semaphore(): the barrier semaphore of the call's collective_id
get_barrier_semaphore_p = RefKernelPrimitive("get_barrier_semaphore")
def_effects(get_barrier_semaphore_p, lambda params: frozenset({ref_effect}))
def_typing(get_barrier_semaphore_p,
           lambda: AbstractRef(ShapedArray((), np.dtype(np.int32)), "barrier_semaphore"))


def _masked_swap_typing(ref, val, mask, *idx, tree):
    out = _swap_rule(ref, val, *idx, tree=tree)
    if np.dtype(val.dtype).itemsize != 4:
        raise NotImplementedError("masked swap with non-32-bit data")
    if tuple(val.shape) != tuple(mask.shape):
        raise ValueError("Expected value and mask to have the same shape, but got value "
                         f"shape {tuple(val.shape)} vs. mask shape {tuple(mask.shape)}.")
    if np.dtype(mask.dtype) != np.bool_:
        raise TypeError(f"pltpu.store: the mask must be boolean; got {mask.str_short(False)}")
    return out


def_typing(masked_swap_p, _masked_swap_typing)
