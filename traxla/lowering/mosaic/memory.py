"""Mosaic lowering rules for a kernel's memory operations (``traxla.ir.rules.pallas_memory``):
DMAs (``tpu.enqueue_dma``, ``tpu.wait_dma2``), semaphores (``tpu.sem_signal``,
``tpu.sem_wait``, ``tpu.sem_read``) and scoped allocation (``tpu.region`` holding
``memref.alloca`` / ``tpu.sem_alloc``), emitted as JAX 0.10.2's Pallas TPU lowering emits
them: an equation's literal operands first (``i32`` constants, in operand order, as JAX
materializes every literal it reads), then the views of its refs, last ref first
(``tpu.memref_slice`` from ``i32`` starts, then ``tpu.memref_squeeze`` for integer
indexers), then the operation. Inside a ``shard_map`` (``ctx.mesh``) a DMA or signal may
reach another device: its device id is made logical over the mesh (``sum(id * stride)``),
and ``lax.axis_index`` is ``tpu.device_id`` divided down to the axis."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.pallas_memory import RefChain, RefReshape, split_refs
from traxla.lowering.mosaic.dialects import arith, ir, memref, tpu
from traxla.lowering.mosaic.kernel import (Lit, constant, element_type, ensure_value,
                                           memref_type, register, value_type)


def _i32():
    return ir.IntegerType.get_signless(32)


def _literals(operands, avals):
    """Every literal operand as a constant of its type, in order (refs stay as they are)."""
    return [constant(x.val, element_type(a.dtype)) if isinstance(x, Lit) else x
            for x, a in zip(operands, avals)]


def _view(ctx, ref, idx, tree):
    """``ref`` seen through its indexer: a ``tpu.memref_slice`` (and ``memref_squeeze``
    where integers index it); the ref itself when the indexer is trivial. A ``RefChain``
    slices once per link."""
    if isinstance(tree, RefChain):
        idx = list(idx)
        for link in tree.links:
            if isinstance(link, RefReshape):
                ref = _reshape(ref, link.shape)
                continue
            n = link.num_operands
            ref, idx = _view(ctx, ref, idx[:n], link), idx[n:]
        return ref
    if tree.trivial:
        return ref
    ref_type = ir.MemRefType(ref.type)
    squeezed = ctx.squeezed_dims(ref) or (False,) * ref_type.rank
    dims, operands = iter(tree.dims), iter(idx)
    starts, sizes, drop, dynamic = [], [], [], []
    for k in range(ref_type.rank):
        if squeezed[k]:
            starts.append(constant(0, _i32()))
            sizes.append(1)
            drop.append(True)
            continue
        d = next(dims)
        if d[0] == "int":
            starts.append(next(operands))
            sizes.append(1)
            drop.append(True)
        elif d[0] == "dslice":
            _, size, stride = d
            if stride != 1:
                raise NotImplementedError("Strided slices of references are unsupported.")
            starts.append(next(operands))
            sizes.append(size)
            drop.append(False)
        elif d[0] == "dsize":  # (a traced size: `?` in the type, the size an operand)
            starts.append(next(operands) if d[2] is None else constant(d[2], _i32()))
            dynamic.append(next(operands))
            sizes.append(ir.ShapedType.get_dynamic_size())
            drop.append(False)
        else:
            _, start, size, stride = d
            if stride != 1:
                raise NotImplementedError("Strided slices of references are unsupported.")
            starts.append(constant(start, _i32()))
            sizes.append(size)
            drop.append(False)
    for s in starts:
        if not isinstance(s.type, ir.IntegerType) or ir.IntegerType(s.type).width != 32:
            raise NotImplementedError(f"a ref indexed by a value of type {s.type} (Mosaic "
                                      "slices refs at i32 indices)")
    out_type = ir.MemRefType.get(sizes, ref_type.element_type,
                                 memory_space=ref_type.memory_space)
    out = tpu.memref_slice(out_type, ref, starts, dynamic)
    if any(drop):
        out = tpu.memref_squeeze(ir.MemRefType.get(
            [n for n, d in zip(sizes, drop) if not d], ref_type.element_type,
            memory_space=ref_type.memory_space), out)
    return out


def _reshape(ref, shape):
    """JAX's ``_reshape_memref``: ``tpu.memref_reshape`` to ``shape``."""
    ref_type = ir.MemRefType(ref.type)
    if ref_type.rank < 2:
        raise NotImplementedError("Reshape 1D ref is not supported.")
    return tpu.memref_reshape(ir.MemRefType.get(list(shape), ref_type.element_type,
                                                memory_space=ref_type.memory_space), ref)


def transformed(ctx, ref, idx, tree):
    """A get/swap's ref through all links of its ``RefChain`` but the last, and the last
    link's operands (JAX's ``_transform_ref`` of the transforms before the indexer)."""
    *links, last = tree.links
    head = RefChain(tuple(links))
    n = head.num_operands
    return _view(ctx, ref, list(idx[:n]), head), list(idx[n:]), last


def _views(ctx, operands, trees, ndev=0):
    """The views of the equation's refs, made last first (JAX's nesting of transformed
    refs), returned in order."""
    pairs = split_refs(operands, trees, ndev)
    views = [None] * len(pairs)
    for k in reversed(range(len(pairs))):
        ref, idx = pairs[k]
        views[k] = _view(ctx, ref, idx, trees[k])
    return views


def _device_id(ctx, ids, kind):
    """A remote operation's logical device id (JAX's ``device_id_to_logical``): a mesh id
    is ``sum(id * stride)`` over the axes of the enclosing ``shard_map``'s mesh."""
    if not ids:
        return None
    if kind == "logical":
        return ids[0]
    mesh = ctx.mesh
    if mesh is None:
        raise ValueError("Cannot use communication in pallas_call without shard_map.")
    sizes = list(mesh.axis_sizes)
    strides = [int(np.prod(sizes[k + 1:])) for k in range(len(sizes))]
    if len(ids) != len(strides):
        raise ValueError("Number of device ids must match the number of mesh axes, but got "
                         f"{len(ids)} ids for a {len(strides)}D mesh.")
    total = None
    for x, stride in zip(ids, strides):  # Python's sum(): 0 + a * b + ...
        term = arith.muli(x, constant(stride, _i32()))
        total = arith.addi(constant(0, _i32()) if total is None else total, term)
    return total


def _check_dma(ctx, trees, ndev):
    (src, _), _ = split_refs(ctx.avals_in, trees, ndev)[:2]
    if np.dtype(src.dtype) == np.bool_:
        raise NotImplementedError("DMAs with bool dtypes are not supported.")


@register("dma_start")
def _dma_start(ctx, *operands, trees, priority, add, ndev=0, device_id_type="mesh"):
    if add:
        raise NotImplementedError("DMA with add=True is not supported.")
    _check_dma(ctx, trees, ndev)
    operands = _literals(operands, ctx.avals_in)
    device_id = _device_id(ctx, operands[len(operands) - ndev:] if ndev else [],
                           device_id_type)
    src, dst, sem, *src_sem = _views(ctx, operands, trees, ndev)
    tpu.enqueue_dma(source=src, target=dst, target_semaphore=sem,
                    source_semaphore=src_sem[0] if src_sem else None, device_id=device_id,
                    core_id=None, priority=priority)
    return []


@register("dma_wait")
def _dma_wait(ctx, *operands, trees, ndev=0, device_id_type="mesh",
              insert_dummy_device=False):
    _check_dma(ctx, trees, ndev)
    operands = _literals(operands, ctx.avals_in)
    if insert_dummy_device:  # (JAX's wait on a remote copy's send semaphore)
        device_id = core_id = constant(0, _i32())
    else:
        device_id = _device_id(ctx, operands[len(operands) - ndev:] if ndev else [],
                               device_id_type)
        core_id = None
    src, dst, sem = _views(ctx, operands, trees, ndev)
    tpu.wait_dma2(sem, src, dst, device_id=device_id, core_id=core_id)
    return []


def _value(x, aval):
    value = ensure_value(x, aval)
    if np.dtype(aval.dtype) != np.int32 and not isinstance(x, Lit):
        raise NotImplementedError(f"a semaphore amount of type {aval.dtype} (Mosaic counts "
                                  "in i32)")
    return value


@register("semaphore_signal")
def _semaphore_signal(ctx, *operands, trees, ndev=0, device_id_type="mesh"):
    operands = _literals(operands, ctx.avals_in)
    if ndev:
        operands, ids = operands[:-ndev], operands[-ndev:]
    value = _value(operands[-1], ctx.avals_in[len(operands) - 1])
    sem, = _views(ctx, operands[:-1], trees)
    device_id = _device_id(ctx, ids, device_id_type) if ndev else None
    tpu.sem_signal(sem, value, device_id=device_id, core_id=None)
    return []


@register("semaphore_wait")
def _semaphore_wait(ctx, *operands, trees, decrement):
    operands = _literals(operands, ctx.avals_in)
    value = _value(operands[-1], ctx.avals_in[-1])
    constant(1 if decrement else 0, ir.IntegerType.get_signless(1))  # (JAX's operand)
    if not decrement:
        raise NotImplementedError("Non-decrementing wait is not supported.")
    sem, = _views(ctx, operands[:-1], trees)
    tpu.sem_wait(sem, value)
    return []


@register("semaphore_read")
def _semaphore_read(ctx, *operands, trees):
    sem, = _views(ctx, _literals(operands, ctx.avals_in), trees)
    return tpu.sem_read(sem)


def _alloc(space, aval):
    if space in ("dma_semaphore", "semaphore"):
        return tpu.sem_alloc(memref_type(aval.shape, aval.dtype, space))
    return memref.alloca(memref_type(aval.shape, aval.dtype, space), [], [])


@register("run_scoped")
def _run_scoped(ctx, *consts, jaxpr, num_consts, allocs):
    consts = [ensure_value(c, a) for c, a in zip(consts, ctx.avals_in)]
    region = tpu.RegionOp([value_type(a) for a in ctx.avals_out])
    block = region.body if isinstance(region.body, ir.Block) else region.body.blocks.append()
    with ir.InsertionPoint(block):
        refs = [_alloc(space, aval) for space, aval in allocs]
        outs = ctx.emit(jaxpr.jaxpr, consts + refs)
        tpu.yield_(outs)
    return list(region.results)


@register("multiple_of")
def _multiple_of(ctx, x, *, values):
    x = ensure_value(x, ctx.avals_in[0])
    for multiple in values:
        x = tpu.assume_multiple(x, multiple)
    return x


@register("axis_index")
def _axis_index(ctx, *, axis_name):
    """The index along a mesh axis of the enclosing ``shard_map`` (JAX's: from
    ``tpu.device_id``, row-major over the mesh)."""
    device_id = tpu.device_id()
    mesh = ctx.mesh
    if mesh is None:
        raise ValueError("Mesh context is not set.")
    names = list(mesh.axis_names)
    if isinstance(axis_name, (tuple, list)) or axis_name not in names:
        raise NotImplementedError(f"axis_index of {axis_name!r} in a Pallas kernel (mesh "
                                  f"axes {tuple(names)})")
    k = names.index(axis_name)
    size = constant(mesh.axis_sizes[k], _i32())
    minor = constant(int(np.prod(mesh.axis_sizes[k + 1:])), _i32())
    return arith.remsi(arith.divsi(device_id, minor), size)


@register("get_barrier_semaphore")
def _get_barrier_semaphore(ctx):
    return tpu.sem_barrier(memref_type((), np.int32, "barrier_semaphore"))
