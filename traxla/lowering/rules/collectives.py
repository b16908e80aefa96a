"""Lowering of ``shard_map`` (an ``sdy.manual_computation``) and of the collectives
inside it (StableHLO all_reduce, all_gather, reduce_scatter, collective_permute and
partition_id arithmetic), with replica groups computed from the mesh."""
from __future__ import annotations

import itertools

import numpy as np

from traxla.ir import dtypes
from traxla.ir.avals import physical_aval
from traxla.ir.sharding import PartitionSpec
from traxla.ir.rules.collectives import (REDUCERS, all_gather_p, axis_index_p, pbroadcast_p, ppermute_p,
                                     precv_p, psend_p,
                                     psum_scatter_p, shard_map_p)
from traxla.lowering.mlir import aval_type, constant, hlo, ir, sdy, tensor_type
from traxla.lowering.module import _OWN_CONSTRAINT, const_value, emit_jaxpr
from traxla.lowering.registry import register_lowering
from traxla.ir.vma import preduced_p, pvary_p, reduced_vary_cast_p, vary_unreduced_cast_p


def _names(p):
    return () if p is None else (p if isinstance(p, tuple) else (p,))


def _sharding_attr(spec, ndim, open_dims=(), mesh=None, name="mesh"):
    """The sdy sharding of ``spec``; ``open_dims`` (and ``P.UNCONSTRAINED`` entries) are
    left open for the partitioner (``{?}``)."""
    dims = []
    unreduced = getattr(spec, "unreduced", ())
    spec = tuple(spec) + (None,) * (ndim - len(spec))
    for i, p in enumerate(spec):
        if p is PartitionSpec.UNCONSTRAINED or i in open_dims:
            dims.append(sdy.DimensionShardingAttr.get([], is_closed=False))
            continue
        dims.append(sdy.DimensionShardingAttr.get([sdy.AxisRefAttr.get(n) for n in _names(p)],
                                                  is_closed=True))
    if unreduced:  # (in mesh order, as JAX emits them)
        order = mesh.axis_names if mesh is not None else sorted(unreduced)
        return sdy.TensorShardingAttr.get(
            name, dims, unreduced_axes=[sdy.AxisRefAttr.get(n) for n in order if n in unreduced])
    return sdy.TensorShardingAttr.get(name, dims)


def _shard_map(ctx, *args, jaxpr, mesh, in_specs, out_specs, manual_axes, check_vma=True):
    builder = ctx.module
    if mesh.size == 1:  # one device: the block is the array, and XLA runs no partitioner
        builder.mesh_stack.append(mesh)
        try:
            return emit_jaxpr(builder, jaxpr.jaxpr, [const_value(v.aval, c) for v, c in zip(jaxpr.jaxpr.constvars, jaxpr.consts)],
                              list(args))
        finally:
            builder.mesh_stack.pop()
    name = builder.ensure_mesh(mesh)
    # (over the stored rank: a key's trailing dims are whole on each device)
    in_sh = sdy.TensorShardingPerValueAttr.get(
        [_sharding_attr(s, physical_aval(a).ndim, mesh=mesh, name=name)
         for s, a in zip(in_specs, ctx.avals_in)])
    out_sh = sdy.TensorShardingPerValueAttr.get(
        [_sharding_attr(s, physical_aval(a).ndim, mesh=mesh, name=name)
         for s, a in zip(out_specs, ctx.avals_out)])
    axes = sdy.ManualAxesAttr.get([ir.StringAttr.get(n) for n in mesh.axis_names
                                   if n in manual_axes])
    op = sdy.ManualComputationOp([aval_type(a) for a in ctx.avals_out], list(args), in_sh, out_sh,
                                 axes)
    block = op.body.blocks.append(*[aval_type(a) for a in jaxpr.in_avals])
    builder.mesh_stack.append(mesh)
    outer_token, builder.token = builder.token, None  # the region is isolated from above
    try:
        with ir.InsertionPoint(block):
            outs = emit_jaxpr(builder, jaxpr.jaxpr, [const_value(v.aval, c) for v, c in zip(jaxpr.jaxpr.constvars, jaxpr.consts)],
                              list(block.arguments))
            sdy.ReturnOp(outs)
    finally:
        builder.mesh_stack.pop()
        builder.token = outer_token
    return list(op.results)


register_lowering(shard_map_p, _shard_map)


def replica_groups(mesh, axes):
    """Device (partition) indices grouped so that each group spans ``axes``."""
    names, sizes = mesh.axis_names, mesh.axis_sizes
    axes = tuple(axes)
    others = [n for n in names if n not in axes]
    groups = {}
    for coords in itertools.product(*[range(s) for s in sizes]):
        pos = dict(zip(names, coords))
        key = tuple(pos[n] for n in others)
        linear = int(np.ravel_multi_index(coords, sizes))
        groups.setdefault(key, []).append((tuple(pos[a] for a in axes), linear))
    return [[d for _, d in sorted(g)] for g in groups.values()]


def _groups_attr(groups):
    arr = np.asarray(groups, np.int64)
    return ir.DenseIntElementsAttr.get(arr, shape=arr.shape)


def _channel(ctx):
    return hlo.ChannelHandle.get(ctx.module.next_channel(), 1)


_COMBINE = {"psum": hlo.add, "pmax": hlo.maximum, "pmin": hlo.minimum}


def _positional_reduce(combine, x, aval_in, axes):
    """``x`` reduced over its positional ``axes`` (vmap's collectives name the batch dim)."""
    dtype = aval_in.dtype
    init = {hlo.add: 0, hlo.maximum: None, hlo.minimum: None}[combine]
    if init is None:  # the identity of max / min: the lowest / highest value of the dtype
        if dtypes.is_float(dtype):
            lo = np.array(-np.inf if combine is hlo.maximum else np.inf, dtype)
        elif dtypes.is_bool(dtype):
            lo = np.array(combine is hlo.minimum, dtype)
        else:
            info = np.iinfo(dtype)
            lo = np.array(info.min if combine is hlo.maximum else info.max, dtype)
    else:
        lo = np.zeros((), dtype)
    shape = [s for d, s in enumerate(aval_in.shape) if d not in axes]
    op = hlo.ReduceOp([tensor_type(shape, dtype)], [x], [constant(lo)], list(axes))
    scalar = tensor_type((), dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments)])
    return op.results[0]


def _reducer(name):
    combine = _COMBINE[name]

    def rule(ctx, x, *, axes, axis_index_groups=None):
        pos = tuple(a for a in axes if isinstance(a, int))
        named = tuple(a for a in axes if not isinstance(a, int))
        if pos:
            x = _positional_reduce(combine, x, ctx.avals_in[0], pos)
        if not named:
            return x
        mesh = ctx.module.mesh_stack[-1]
        if mesh.size == 1:
            return x
        aval = ctx.aval_out
        groups = _groups(mesh, named, axis_index_groups)
        op = hlo.AllReduceOp([aval_type(aval)], [x], _groups_attr(groups),
                             channel_handle=_channel(ctx), use_global_device_ids=True)
        scalar = tensor_type((), aval.dtype)
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([combine(*block.arguments)])
        return op.results[0]
    return rule


for _name in REDUCERS:
    register_lowering(REDUCERS[_name], _reducer(_name))


def _groups(mesh, names, axis_index_groups):
    """The replica groups spanning ``names``, split into JAX's ``axis_index_groups``."""
    groups = replica_groups(mesh, names)
    if axis_index_groups is not None:
        groups = [[g[i] for i in sub] for g in groups for sub in axis_index_groups]
    return groups


def _all_gather(ctx, x, *, all_gather_dimension, axis_name, axis_size, tiled,
                axis_index_groups=None):
    mesh = ctx.module.mesh_stack[-1]
    x_aval = ctx.avals_in[0]
    dim = all_gather_dimension
    if mesh.size == 1:
        return x if tiled else hlo.reshape(aval_type(ctx.aval_out), x)
    if not tiled:
        shape = list(x_aval.shape)
        shape.insert(dim, 1)
        x = hlo.reshape(tensor_type(shape, x_aval.dtype), x)
    op = hlo.AllGatherOp([aval_type(ctx.aval_out)], [x], dim,
                         _groups_attr(_groups(mesh, _names(axis_name), axis_index_groups)),
                         channel_handle=_channel(ctx), use_global_device_ids=True)
    return op.results[0]


def _psum_scatter(ctx, x, *, scatter_dimension, axis_name, axis_size, tiled,
                  axis_index_groups=None):
    mesh = ctx.module.mesh_stack[-1]
    x_aval, out = ctx.avals_in[0], ctx.aval_out
    dim = scatter_dimension
    if mesh.size == 1:
        return x if tiled else hlo.reshape(aval_type(out), x)
    shape = list(x_aval.shape)
    shape[dim] //= axis_size
    op = hlo.ReduceScatterOp(tensor_type(shape, x_aval.dtype), x, dim,
                             _groups_attr(_groups(mesh, _names(axis_name), axis_index_groups)),
                             channel_handle=_channel(ctx), use_global_device_ids=True)
    scalar = tensor_type((), x_aval.dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([hlo.add(*block.arguments)])
    result = op.result
    if not tiled:
        result = hlo.reshape(aval_type(out), result)
    return result


def _ppermute(ctx, x, *, axis_name, perm):
    mesh = ctx.module.mesh_stack[-1]
    if mesh.size == 1:
        return x if perm else hlo.multiply(x, constant(np.zeros((), ctx.aval_out.dtype)))
    pairs = []
    for group in replica_groups(mesh, _names(axis_name)):
        pairs += [[group[s], group[d]] for s, d in perm]
    arr = np.asarray(pairs, np.int64).reshape(-1, 2)
    op = hlo.CollectivePermuteOp(x, ir.DenseIntElementsAttr.get(arr, shape=arr.shape),
                                 channel_handle=_channel(ctx))
    return op.result


def _pbroadcast(ctx, x, *, axis_name, source):
    """``collective_broadcast`` from each group's ``source`` (first in its group), over
    partitions (global device ids and a channel), as JAX lowers it: for GPUs only."""
    mesh = ctx.module.mesh_stack[-1]
    groups = [[g[source]] + g[:source] + g[source + 1:]
              for g in replica_groups(mesh, _names(axis_name))]
    return hlo.CollectiveBroadcastOp(x, _groups_attr(groups),
                                     channel_handle=_channel(ctx)).results[0]


def _p2p_pairs(ctx, axis_name, perm, op_name):
    """JAX's source-target pairs of a send or receive: ``perm`` in every device group."""
    groups = replica_groups(ctx.module.mesh_stack[-1], _names(axis_name))
    size = len(groups[0])
    srcs, dsts = [s % size for s, _ in perm], [d % size for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"{op_name} sources and destinations must be unique, got {perm}.")
    pairs = np.asarray([[sorted(g)[s], sorted(g)[d]] for g in groups for s, d in perm],
                       np.int64).reshape(-1, 2)
    return ir.DenseIntElementsAttr.get(pairs, shape=pairs.shape)


def _psend(ctx, x, *, axis_name, perm):
    """``stablehlo.send`` on a fresh token (JAX's channel 1, device to device): GPUs only."""
    pairs = _p2p_pairs(ctx, axis_name, perm, "psend")
    return hlo.SendOp([x], hlo.create_token(), hlo.ChannelHandle.get(1, 1),
                      source_target_pairs=pairs).result


def _precv(ctx, token, *, out_shape, axis_name, perm):
    pairs = _p2p_pairs(ctx, axis_name, perm, "precv")
    return hlo.RecvOp([aval_type(out_shape), token.type], token, hlo.ChannelHandle.get(1, 1),
                      source_target_pairs=pairs).results[0]


def _gpu_only(name):
    def rule(ctx, *args, **params):
        raise NotImplementedError(f"{name} is currently only implemented on GPU")
    return rule


def _axis_index(ctx, *, axis_name):
    mesh = ctx.module.mesh_stack[-1]
    if mesh.size == 1:
        return constant(np.int32(0))
    names = _names(axis_name)
    u32 = dtypes.uint32
    pid = hlo.PartitionIdOp().result
    index = None
    for name in names:
        i = mesh.axis_names.index(name)
        stride = int(np.prod(mesh.axis_sizes[i + 1:]))
        coord = hlo.remainder(hlo.divide(pid, constant(np.uint32(stride))),
                              constant(np.uint32(mesh.axis_sizes[i])))
        index = coord if index is None else hlo.add(
            hlo.multiply(index, constant(np.uint32(mesh.axis_sizes[i]))), coord)
    del u32
    return hlo.convert(tensor_type((), dtypes.int32), index)


register_lowering(all_gather_p, _all_gather)
register_lowering(psum_scatter_p, _psum_scatter)
register_lowering(ppermute_p, _ppermute)
register_lowering(pbroadcast_p, _pbroadcast, platform="gpu")  # JAX lowers it for GPUs only


def _no_pbroadcast(ctx, x, **params):
    raise NotImplementedError("MLIR translation rule for primitive 'pbroadcast' not found for "
                              f"platform {ctx.module.platform}")


register_lowering(pbroadcast_p, _no_pbroadcast)  # other platforms: JAX's error
for _prim, _rule in ((psend_p, _psend), (precv_p, _precv)):
    register_lowering(_prim, _rule, platform="gpu")
    register_lowering(_prim, _gpu_only(_prim.name))  # as JAX's rules for other platforms
register_lowering(axis_index_p, _axis_index)
register_lowering(pvary_p, lambda ctx, x, *, axes: x)  # a cast in the type only
for _prim in (vary_unreduced_cast_p, reduced_vary_cast_p, preduced_p):
    register_lowering(_prim, lambda ctx, x, *, axes: x)  # (free casts, as JAX's)


def _reshard(ctx, x, *, dst_sharding, dst_spec):
    name = ctx.module.ensure_mesh(dst_spec[0])
    return sdy.ShardingConstraintOp(x, _sharding_attr(dst_spec[1], ctx.aval_out.ndim,
                                                      mesh=dst_spec[0], name=name)).result


from traxla.ir.rules.collectives import reshard_p  # noqa: E402

register_lowering(reshard_p, _reshard)
_OWN_CONSTRAINT.update((reshard_p, shard_map_p))
