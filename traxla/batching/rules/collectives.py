"""Batching rules for shard_map and the collectives, as JAX's batchers for collectives.

A collective names the axes it works over. When one of them is the ``axis_name`` of the
vmap being batched (``current_axis_name()``), the vmapped axis is the collective's axis:
``psum`` becomes a sum over the batch dim, ``axis_index`` an iota, ``all_gather`` a
broadcast... Otherwise (a shard_map's mesh axis, an outer vmap's name) the batch dim is an
ordinary data dimension and the collective is bound again, its dimensions shifted."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla import numpy as jnp
from traxla.ir.rules.all_to_all import all_to_all_p, ragged_all_to_all_p
from traxla.ir.vma import preduced_p, pvary_p, reduced_vary_cast_p, vary_unreduced_cast_p
from traxla.ir.rules.collectives import (REDUCERS, all_gather_p, axis_index_p, pbroadcast_p, ppermute_p,
                                         precv_p, psend_p,
                                         psum_p, psum_scatter_p, shard_map_p)
from traxla.ir.rules.reduction import P as _reductions
from traxla.ir.sharding import PartitionSpec
from traxla.batching.batch_trace import (batch_jaxpr, bdim_at_front, current_axis_name,
                                         moveaxis, register_batching, rules_for_unbatched)

_reduce_sum_p = _reductions["reduce_sum"]


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _is_ours(names) -> bool:
    name = current_axis_name()
    return name is not None and name in names


def _no_groups(axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")


def _splitaxis(axis, factor, x):
    shape = list(x.shape)
    shape[axis:axis + 1] = [factor, shape[axis] // factor]
    return lax.reshape(x, shape)


def _foldaxis(axis, x):
    shape = list(x.shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return lax.reshape(x, shape)


# -- psum, pmax, pmin ------------------------------------------------------------------------

def _reduction(prim):
    def rule(size, vals, dims, *, axes, axis_index_groups):
        (v,), (d,) = vals, dims
        name = current_axis_name()
        ours = _is_ours(axes)
        if d is None:
            if not ours:
                return prim.bind(v, axes=axes, axis_index_groups=axis_index_groups), None
            # the same value at every index of the vmapped axis: psum is size * v
            _no_groups(axis_index_groups)
            rest = tuple(a for a in axes if a != name)
            if rest:
                v = prim.bind(v, axes=rest, axis_index_groups=axis_index_groups)
            return (lax.mul(lax._const(v, size), v) if prim is psum_p else v), None
        if not ours and not any(isinstance(a, int) for a in axes):
            return prim.bind(v, axes=axes, axis_index_groups=axis_index_groups), d
        _no_groups(axis_index_groups)
        # the batch dim moves to the front; integer (positional) axes shift past it and the
        # vmapped name becomes that positional axis
        v = moveaxis(v, d, 0)
        new_axes = tuple(a + 1 if isinstance(a, int) else 0 if (ours and a == name) else a
                         for a in axes)
        return prim.bind(v, axes=new_axes, axis_index_groups=None), (None if ours else 0)
    return rule


# -- all_gather and psum_scatter -------------------------------------------------------------

def _all_gather(size, vals, dims, *, all_gather_dimension, axis_name, axis_size, tiled,
                axis_index_groups=None):
    (x,), (d,) = vals, dims
    names = _names(axis_name)
    dim = all_gather_dimension
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled,
                  axis_index_groups=axis_index_groups)
    if not _is_ours(names):
        if d is None:
            return all_gather_p.bind(x, all_gather_dimension=dim, **params), None
        if d <= dim:
            dim += 1
        elif not tiled:  # the stacked axis lands before the batch dim
            d += 1
        return all_gather_p.bind(x, all_gather_dimension=dim, **params), d
    _no_groups(axis_index_groups)
    if len(names) > 1:
        raise NotImplementedError("all_gather over a vmapped axis together with other axes "
                                  f"({axis_name}) is not supported (nor is it by JAX).")
    if d is None:
        shape = list(x.shape)
        shape.insert(dim, size)
        y = lax.broadcast_in_dim(x, shape, [i for i in range(len(shape)) if i != dim])
    else:
        y = moveaxis(x, d, dim)
    if tiled:
        y = _foldaxis(dim, y)
    return y, None


def _psum_scatter(size, vals, dims, *, scatter_dimension, axis_name, axis_size, tiled,
                  axis_index_groups=None):
    (x,), (d,) = vals, dims
    names = _names(axis_name)
    dim = scatter_dimension
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled,
                  axis_index_groups=axis_index_groups)
    if not _is_ours(names):
        if d is None:
            return psum_scatter_p.bind(x, scatter_dimension=dim, **params), None
        if d <= dim:
            dim += 1
        elif not tiled:  # the scattered dimension disappears before the batch dim
            d -= 1
        return psum_scatter_p.bind(x, scatter_dimension=dim, **params), d
    _no_groups(axis_index_groups)
    if len(names) > 1:
        raise NotImplementedError("psum_scatter over a vmapped axis together with other axes "
                                  f"({axis_name}) is not supported (nor is it by JAX).")
    shape = list(x.shape) if d is None else [s for i, s in enumerate(x.shape) if i != d]
    if tiled and shape[dim] % size:
        raise ValueError(f"psum_scatter of dimension {dim} of size {shape[dim]} over the vmapped "
                         f"axis {axis_name!r} of size {size}: not divisible.")
    if not tiled and shape[dim] != size:
        raise ValueError(f"psum_scatter with tiled=False needs dimension {dim} of size {size} "
                         f"(the size of the vmapped axis {axis_name!r}), got {shape[dim]}.")
    if d is None:
        y = lax.mul(x, lax._const(x, size))
    else:
        y = _reduce_sum_p.bind(x, axes=(d,), out_sharding=None)
    if tiled:
        y = _splitaxis(dim, size, y)
    return y, dim


# -- ppermute, axis_index, all_to_all ----------------------------------------------------------

def _ppermute(size, vals, dims, *, axis_name, perm):
    (v,), (d,) = vals, dims
    names = _names(axis_name)
    if not _is_ours(names):
        return ppermute_p.bind(v, axis_name=axis_name, perm=perm), d
    if len(names) > 1:
        raise NotImplementedError("ppermute over a vmapped axis together with other axes "
                                  f"({axis_name}) is not supported.")
    full = len(perm) == size
    if d is None and full:  # every index receives the (same) value
        return v, None
    if d is None:
        v, d = bdim_at_front(v, None, size), 0
    src = np.zeros(size, dtype=np.int32)
    for s, t in perm:
        src[t] = s
    out = jnp.take(v, src, axis=d)
    if not full:  # indices that receive nothing get zeros (as ppermute documents)
        received = np.zeros(size, dtype=bool)
        received[[t for _, t in perm]] = True
        mask = received.reshape([size if i == d else 1 for i in range(out.ndim)])
        out = jnp.where(mask, out, jnp.zeros((), out.dtype))
    return out, d


def _pbroadcast(size, vals, dims, *, axis_name, source):
    """As JAX's: over the vmapped axis, every index takes the ``source`` one."""
    (v,), (d,) = vals, dims
    names = _names(axis_name)
    if not _is_ours(names):
        return pbroadcast_p.bind(v, axis_name=axis_name, source=source), d
    if len(names) > 1:
        raise NotImplementedError("pbroadcast batcher only supports a single axis")
    if d is None:
        return v, d
    return jnp.take(v, np.full(size, source, np.int32), axis=d), d


def _ragged_all_to_all(size, vals, dims, *, axis_name, axis_index_groups):
    """As JAX's: over another axis, the batch joins the leading (ragged) axis of operand
    and output, each batch member's offsets shifted into its own block."""
    if all(d is None for d in dims) and not _is_ours(_names(axis_name)):
        return ragged_all_to_all_p.bind(*vals, axis_name=axis_name,
                                        axis_index_groups=axis_index_groups), None
    if _is_ours(_names(axis_name)) or axis_index_groups:
        raise NotImplementedError("Please open a feature request!")
    operand, output = (bdim_at_front(v, d, size) for v, d in zip(vals[:2], dims[:2]))
    n, m = lax.shape_of(operand)[1], lax.shape_of(output)[1]

    def at_second(x, d):  # [slices, batch]
        if d is None:
            return lax.broadcast_in_dim(x, (lax.shape_of(x)[0], size), (0,))
        return x if d == 1 else lax.transpose(x, (1, 0))
    input_offsets, send_sizes, output_offsets, recv_sizes = (
        at_second(v, d) for v, d in zip(vals[2:], dims[2:]))
    step = lambda x, k: lax.add(x, lax.broadcast_in_dim(  # noqa: E731
        lax.mul(lax.iota(lax.dtype_of(x), size), lax.full((size,), k, lax.dtype_of(x))),
        lax.shape_of(x), (1,)))
    input_offsets, output_offsets = step(input_offsets, n), step(output_offsets, m)
    merge = lambda x: lax.reshape(  # noqa: E731
        x, (lax.shape_of(x)[0] * lax.shape_of(x)[1],) + tuple(lax.shape_of(x)[2:]))
    merged = [merge(x) for x in (operand, output, input_offsets, send_sizes, output_offsets,
                                 recv_sizes)]
    out = ragged_all_to_all_p.bind(*merged, axis_name=axis_name, axis_index_groups=None)
    shape = lax.shape_of(out)
    return lax.reshape(out, (size, shape[0] // size) + tuple(shape[1:])), 0


def _one_sided(prim):
    """psend/precv under vmap: tokens carry no batch dim, so only unbatched values pass
    (precv's ``out_shape`` could not say the sender's batch); over the vmapped axis itself,
    and for a batched value, they are refused (JAX 0.10.2's batcher binds ppermute here)."""
    def rule(size, vals, dims, *, axis_name, **params):
        if _is_ours(_names(axis_name)) or any(d is not None for d in dims):
            raise NotImplementedError(f"{prim.name} under vmap (of a batched value, or over "
                                      "the vmapped axis) is not supported.")
        return prim.bind(*vals, axis_name=axis_name, **params), None
    return rule


def _axis_index(size, vals, dims, *, axis_name):
    if not _is_ours(_names(axis_name)):
        return axis_index_p.bind(axis_name=axis_name), None
    if isinstance(axis_name, (tuple, list)) and len(axis_name) > 1:
        raise NotImplementedError(f"axis_index over the axes {axis_name}, one of them vmapped")
    return lax.iota(np.int32, size), 0


def _all_to_all(size, vals, dims, *, split_axis, concat_axis, axis_name, axis_index_groups,
                tiled, axis_size):
    (x,), (d,) = vals, dims
    names = _names(axis_name)
    params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled,
                  axis_size=axis_size)
    if not _is_ours(names):
        if d is None:
            return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                                     **params), None
        return all_to_all_p.bind(x, split_axis=split_axis + (d <= split_axis),
                                 concat_axis=concat_axis + (d <= concat_axis), **params), d
    _no_groups(axis_index_groups)
    if len(names) > 1:
        raise NotImplementedError("all_to_all over a vmapped axis together with other axes "
                                  f"({axis_name}) is not supported.")
    if d is None:
        x, d = bdim_at_front(x, None, size), 0
    if split_axis == concat_axis:  # JAX's batcher: chunks of the axis trade places with lanes
        axis = split_axis + (d <= split_axis)
        d_pre_split = d
        x = _splitaxis(axis, size, x)
        d += (axis <= d)
        perm = list(range(x.ndim))
        perm[d], perm[axis] = perm[axis], perm[d]
        return _foldaxis(axis, lax.transpose(x, perm)), d_pre_split
    x_concat = _foldaxis(concat_axis, moveaxis(x, d, concat_axis))
    return _splitaxis(split_axis, size, x_concat), split_axis


# -- shard_map -----------------------------------------------------------------------------

def _shard_map(size, vals, dims, *, jaxpr, mesh, in_specs, out_specs, manual_axes, check_vma):
    vals = [v if d is None else bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    body, out_dims = batch_jaxpr(jaxpr, size, in_dims, [None] * len(jaxpr.out_avals))
    new_in = tuple(s if d is None else PartitionSpec(None, *s) for s, d in zip(in_specs, in_dims))
    new_out = tuple(s if d is None else PartitionSpec(None, *s) for s, d in zip(out_specs, out_dims))
    outs = shard_map_p.bind(*vals, jaxpr=body, mesh=mesh, in_specs=new_in, out_specs=new_out,
                            manual_axes=manual_axes, check_vma=check_vma)
    return outs, out_dims


for _prim in REDUCERS.values():
    register_batching(_prim, _reduction(_prim))
register_batching(all_gather_p, _all_gather)
register_batching(psum_scatter_p, _psum_scatter)
register_batching(ppermute_p, _ppermute)
register_batching(pbroadcast_p, _pbroadcast)
register_batching(ragged_all_to_all_p, _ragged_all_to_all)
register_batching(psend_p, _one_sided(psend_p))
register_batching(precv_p, _one_sided(precv_p))
register_batching(axis_index_p, _axis_index)
register_batching(all_to_all_p, _all_to_all)
register_batching(shard_map_p, _shard_map)
register_batching(pvary_p, lambda size, vals, dims, *, axes: (pvary_p.bind(vals[0], axes=axes),
                                                              dims[0]))


def _refused_cast_batcher(prim):
    """JAX's batchers of these casts raise NotImplementedError: so do traxla's, naming it."""
    def rule(size, vals, dims, *, axes):
        raise NotImplementedError(
            f"vmap of `{prim.name}` (a cast between unreduced, reduced and varying values "
            f"inside shard_map, over axes {axes}) is not implemented, as in JAX")
    return rule


for _cast in (vary_unreduced_cast_p, reduced_vary_cast_p, preduced_p):
    register_batching(_cast, _refused_cast_batcher(_cast))
# as JAX's fancy batchers, these run under a vmap even on unbatched operands: the vmapped
# axis may be the one they work over
rules_for_unbatched.update([*REDUCERS.values(), all_gather_p, psum_scatter_p, ppermute_p,
                            axis_index_p, all_to_all_p, pbroadcast_p, ragged_all_to_all_p])


def _reshard(size, vals, dims, *, dst_sharding, dst_spec):
    x = bdim_at_front(vals[0], dims[0], size)
    mesh, spec = dst_spec
    sharding = None if dst_sharding is None else dst_sharding.with_spec((None,) + tuple(dst_sharding.spec))
    return reshard_p.bind(x, dst_sharding=sharding, dst_spec=(mesh, (None,) + tuple(spec))), 0


from traxla.ir.rules.collectives import reshard_p  # noqa: E402

register_batching(reshard_p, _reshard)
