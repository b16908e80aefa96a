"""The memory operations of a Pallas TPU kernel traced for Mosaic (a compiled
``pallas_call``): DMAs, semaphores and scoped allocations become equations of
``traxla.ir.rules.pallas_memory`` (lowered by ``traxla/lowering/mosaic/memory.py``).
``tpu_primitives`` and ``kernel_refs`` call these while ``in_compiled_kernel()``; in
interpret mode they run as traxla operations on refs instead.

A ref argument is a kernel ref or a view of one (``x_ref.at[pl.ds(i * 8, 8)]``,
``sems.at[slot]``); a semaphore is a ref of memory space ``"dma_semaphore"`` or
``"semaphore"`` (see ``scratch_alloc``)."""
from __future__ import annotations

import enum

import numpy as np

from traxla import tree_util
from traxla.ir import dtypes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.pallas_memory import (RefChain, RefReshape, dma_start_p, dma_wait_p,
                                           masked_swap_p, run_scoped_p, semaphore_read_p,
                                           semaphore_signal_p, semaphore_wait_p, view_shape)
from traxla.ir.rules.refs import AbstractRef, is_ref_aval
from traxla.state import ref_chain
from traxla.state.ref import _RefView, make_indexer
from traxla.tracer.staging import trace_to_jaxpr

_SPACES = {"vmem": "vmem", "smem": "smem", "any": "any", "hbm": "hbm", "default": "vmem"}


def scratch_alloc(shape_type, what="scratch buffers"):
    """``(memory space, aval)`` of a scratch shape: ``pltpu.VMEM((8, 128), f32)``,
    ``pltpu.SMEM(...)``, ``pltpu.SemaphoreType.DMA`` / ``.REGULAR`` (or ``DMA((n,))``, an
    array of them)."""
    if isinstance(shape_type, enum.Enum) and type(shape_type).__name__ == "SemaphoreType":
        kind, shape = shape_type, ()
    else:
        inner = getattr(shape_type, "inner_aval", None)
        kind, shape = (inner if isinstance(inner, tuple) and len(inner) == 2
                       and isinstance(inner[0], enum.Enum) else (None, None))
    if kind is not None:
        space = {"dma": "dma_semaphore", "regular": "semaphore"}.get(str(kind.value))
        if space is None:
            raise NotImplementedError(f"{what} of type {kind} (barrier semaphores) are not "
                                      "implemented by traxla's Mosaic lowering")
        return space, ShapedArray(tuple(shape), np.dtype(np.int32))
    aval = shape_type.get_array_aval() if hasattr(shape_type, "get_array_aval") else None
    if not isinstance(aval, ShapedArray) or dtypes.is_extended(aval.dtype):
        raise NotImplementedError(f"{what} of type {shape_type} are not implemented by "
                                  "traxla's Mosaic lowering")
    space = getattr(shape_type, "memory_space", None)
    space = str(getattr(space, "value", space)) if space is not None else "vmem"
    if space not in _SPACES:
        raise NotImplementedError(f"{what} in memory space {space} are not implemented by "
                                  "traxla's Mosaic lowering")
    return _SPACES[space], aval


def _ref_operands(x, what):
    """``(ref, RefIndexer, index operands)`` of a kernel ref or a view of one."""
    ref, chain = (x.ref, x.chain) if isinstance(x, _RefView) else (x, ())
    if not is_ref_aval(getattr(ref, "aval", None)):
        raise ValueError(f"{what} must be a Ref (a kernel ref or `ref.at[...]`); got {x!r}")
    links, operands, shape = [], [], tuple(ref.shape)
    for idx in chain:  # one indexer per `.at` (JAX's transforms), trivial ones dropped
        if isinstance(idx, RefReshape):
            links.append(idx)
            shape = idx.shape
            continue
        link, ops = make_indexer(shape, idx)
        if not link.trivial:
            links.append(link)
            operands += ops
            shape = view_shape(ShapedArray(shape, ref.dtype), link)
    if not links:
        tree = make_indexer(shape, None)[0]
    elif len(links) == 1 and not isinstance(links[0], RefReshape):
        tree = links[0]
    else:
        tree = RefChain(tuple(links))
    for o in operands:
        if np.shape(o):
            raise NotImplementedError(f"{what}: indexing a ref with an integer array in a "
                                      "DMA or semaphore operation")
    return ref, tree, list(operands)


def _flat(*pairs):
    operands, trees = [], []
    for x, what in pairs:
        ref, tree, idx = _ref_operands(x, what)
        operands += [ref, *idx]
        trees.append(tree)
    return operands, tuple(trees)


def _device_id(device_id, device_id_type):
    """A remote operation's device id as operands (a mesh id: one per mesh axis) and its
    kind ("mesh" or "logical")."""
    if device_id is None:
        return [], "mesh"
    kind = str(getattr(device_id_type, "value", device_id_type) or "mesh").lower()
    if isinstance(device_id, dict):
        raise NotImplementedError("a device id given as a dict of mesh axes is not "
                                  "implemented by traxla's Mosaic lowering")
    leaves = tree_util.tree_leaves(device_id)
    if kind == "logical" and len(leaves) != 1:
        raise ValueError(f"A logical device id is one integer; got {device_id!r}")
    return leaves, kind


def dma_start(src_ref, dst_ref, sem, *, src_sem=None, device_id=None, device_id_type=None,
              priority=0, add=False):
    pairs = [(src_ref, "DMA source"), (dst_ref, "DMA destination"), (sem, "DMA semaphore")]
    if src_sem is not None:
        pairs.append((src_sem, "DMA source semaphore"))
    operands, trees = _flat(*pairs)
    dev, kind = _device_id(device_id, device_id_type)
    dma_start_p.bind(*operands, *dev, trees=trees, priority=int(priority), add=bool(add),
                     ndev=len(dev), device_id_type=kind)


def dma_wait(src_ref, dst_ref, sem, *, device_id=None, device_id_type=None,
             insert_dummy_device=False):
    operands, trees = _flat((src_ref, "DMA source"), (dst_ref, "DMA destination"),
                            (sem, "DMA semaphore"))
    dev, kind = _device_id(device_id, device_id_type)
    dma_wait_p.bind(*operands, *dev, trees=trees, ndev=len(dev), device_id_type=kind,
                    insert_dummy_device=bool(insert_dummy_device))


def semaphore_signal(sem, inc=1, *, device_id=None, device_id_type=None):
    operands, trees = _flat((sem, "semaphore_signal's semaphore"))
    dev, kind = _device_id(device_id, device_id_type)
    semaphore_signal_p.bind(*operands, inc, *dev, trees=trees, ndev=len(dev),
                            device_id_type=kind)


def semaphore_wait(sem, value=1, decrement=True):
    operands, trees = _flat((sem, "semaphore_wait's semaphore"))
    semaphore_wait_p.bind(*operands, value, trees=trees, decrement=bool(decrement))


def semaphore_read(sem):
    operands, trees = _flat((sem, "semaphore_read's semaphore"))
    return semaphore_read_p.bind(*operands, trees=trees)


def _is_scratch_type(t) -> bool:
    return (isinstance(t, enum.Enum) and type(t).__name__ == "SemaphoreType") or \
        hasattr(t, "get_array_aval") or hasattr(t, "inner_aval")


def run_scoped(f, *types, collective_axes=(), **kw_types):
    """``pl.run_scoped`` in a compiled kernel: ``f`` traced on fresh refs of ``types`` (a
    ``tpu.region`` that allocates them); its result is ``run_scoped``'s."""
    if collective_axes:
        raise NotImplementedError("run_scoped lowering does not support collective axes")
    flat, tree = tree_util.tree_flatten((types, kw_types), is_leaf=_is_scratch_type)
    allocs = tuple(scratch_alloc(t, "pl.run_scoped allocations") for t in flat)
    out_trees = []

    def body(*refs):
        args, kwargs = tree_util.tree_unflatten(tree, list(refs))
        leaves, out_tree = tree_util.tree_flatten(f(*args, **kwargs))
        out_trees.append(out_tree)
        for leaf in leaves:
            if is_ref_aval(getattr(leaf, "aval", None)) or isinstance(leaf, _RefView):
                raise ValueError("pl.run_scoped: the function returned a ref; refs it "
                                 "allocates live only inside it (return values).")
        return leaves

    closed = trace_to_jaxpr(body, [AbstractRef(a, space) for space, a in allocs])
    jaxpr = closed.jaxpr
    lifted = Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
                   jaxpr.debug_info)
    outs = run_scoped_p.bind(*closed.consts, jaxpr=ClosedJaxpr(lifted, []),
                             num_consts=len(closed.consts), allocs=allocs)
    return tree_util.tree_unflatten(out_trees[0], outs)


def sync_copy(src_ref, dst_ref, *, add=False):
    """JAX's ``pltpu.sync_copy``: a scoped DMA semaphore, every copy started, then every
    one waited for (pytrees of refs pair up leaf by leaf)."""
    srcs = tree_util.tree_leaves(src_ref, is_leaf=lambda x: isinstance(x, _RefView))
    if not srcs:
        return
    dsts = tree_util.tree_leaves(dst_ref, is_leaf=lambda x: isinstance(x, _RefView))
    from traxla.experimental.pallas.tpu import SemaphoreType

    def body(sem):
        for s, d in zip(srcs, dsts):
            dma_start(s, d, sem, add=add)
        for s, d in zip(srcs, dsts):
            dma_wait(s, d, sem)

    run_scoped(body, sem=SemaphoreType.DMA(()))


def masked_store(ref, val, mask):
    """``pltpu.store(ref, val, mask=mask)`` in a compiled kernel: JAX's masked swap (the
    whole ref or view written where ``mask`` holds)."""
    import traxla.numpy as jnp
    from traxla.state.ref import _implicit_cast
    if isinstance(ref, _RefView):
        if any(isinstance(i, RefReshape) for i in ref.chain):
            tree, operands = ref_chain.chain_indexer(ref.ref.shape, ref.chain, make_indexer)
        else:  # (JAX folds a view's indexers into the store's)
            tree, operands = make_indexer(ref.ref.shape, ref.idx)
        base = ref.ref
    else:
        base, (tree, operands) = ref, make_indexer(ref.shape, None)
    if not is_ref_aval(getattr(base, "aval", None)):
        raise ValueError(f"pltpu.store: a Ref is stored into; got {ref!r}")
    masked_swap_p.bind(base, _implicit_cast(base.dtype, val), jnp.asarray(mask), *operands,
                       tree=tree)
