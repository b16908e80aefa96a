"""``lax.ragged_dot`` and ``lax.ragged_dot_general`` (JAX's ragged matrix multiplications),
lowered as JAX lowers them on CPU: the ragged dimension is expanded into a dense, masked
group dimension (zeros outside each group) and one ``dot_general`` contracts it with the rhs
group dimension (non-contracting mode) or keeps it in front (contracting mode)."""
from __future__ import annotations

import numpy as np

from traxla.batching import vmap
from traxla.ir.rules.ragged_dot import (RaggedDotDimensionNumbers, RaggedDotMode,  # noqa: F401
                                        ragged_dot_general_p, ragged_dot_mode_and_dim,
                                        ragged_dot_prefix_dims, remaining)
from traxla.lax import (_type_sharding, bitwise_and, broadcast, broadcast_in_dim,
                        broadcasted_iota, concatenate, cumsum, dot_general, full_like, le, lt,
                        select, slice as _slice, transpose)
from traxla.lax.precision import canonicalize_precision
from traxla.lowering.decompose import register_decomposition
from traxla.primitives.values import shape_of
from traxla.tracer.staging import trace_to_jaxpr

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]

_BASIC_RAGGED_DOT_DIMENSION_NUMBERS = RaggedDotDimensionNumbers(
    dot_dimension_numbers=(([1], [1]), ([], [])), lhs_ragged_dimensions=[0],
    rhs_group_dimensions=[0])


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """Ragged matrix multiplication: ``lhs`` (m, k), ``rhs`` (g, k, n), ``group_sizes`` (g,)
    integers; rows ``[sum(group_sizes[:i]), sum(group_sizes[:i+1]))`` of ``lhs`` are
    multiplied by ``rhs[i]``; rows past the groups are zeros. Returns (m, n)."""
    return ragged_dot_general(lhs, rhs, group_sizes,
                              ragged_dot_dimension_numbers=_BASIC_RAGGED_DOT_DIMENSION_NUMBERS,
                              precision=canonicalize_precision(precision),
                              preferred_element_type=preferred_element_type,
                              group_offset=group_offset, out_sharding=out_sharding)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged matrix multiplication with ``dot_general``'s batch and contracting dimensions,
    one lhs ragged dimension and at most one rhs group dimension (see
    ``RaggedDotDimensionNumbers``); in the contracting mode the result has a leading group
    dimension."""
    if out_sharding is not None:
        dn = ragged_dot_dimension_numbers
        (lc, _), (lb, _) = dn.dot_dimension_numbers
        lhs_rank = len(shape_of(lhs))
        ndim = (lhs_rank + len(shape_of(rhs)) - 2 * len(lc) - len(lb)
                - len(dn.rhs_group_dimensions)
                + (ragged_dot_mode_and_dim(lhs_rank, dn)[0] is RaggedDotMode.RAGGED_CONTRACTING))
        out_sharding = _type_sharding(out_sharding, ndim)
    return ragged_dot_general_p.bind(
        lhs, rhs, group_sizes, ragged_dot_dimension_numbers=ragged_dot_dimension_numbers,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type, group_offset=group_offset,
        out_sharding=out_sharding)


def _ragged_to_dense(x, gs, *, dim):
    """``x`` with a leading group dimension: group ``i`` keeps its slice of ``dim``."""
    shape = tuple(shape_of(gs)) + tuple(shape_of(x))
    x = broadcast_in_dim(x, shape, list(range(1, len(shape))))
    iota = broadcasted_iota(gs.dtype, shape, dim + 1)
    ends = cumsum(gs)
    starts = concatenate([_slice(full_like(gs, 0), (0,), (1,)),
                          _slice(ends, (0,), (shape_of(ends)[0] - 1,))], 0)
    ends = broadcast_in_dim(ends, shape, (0,))
    starts = broadcast_in_dim(starts, shape, (0,))
    mask = bitwise_and(le(starts, iota), lt(iota, ends))
    return select(mask, x, full_like(x, 0))


def _batched_ragged_to_dense(dim, *x_in_axes):
    if not x_in_axes:
        return lambda x, gs: _ragged_to_dense(x, gs, dim=dim)
    x_axis, *rest = x_in_axes
    decr = lambda d: d - 1 if d >= x_axis else d  # noqa: E731
    return vmap(_batched_ragged_to_dense(decr(dim), *[decr(ax) for ax in rest]),
                in_axes=(x_axis, 0))


def _expand(x, dim, gs, *axes):
    """The ragged ``dim`` of ``x`` (batched over ``axes``) as an outermost group axis."""
    expanded = _batched_ragged_to_dense(dim, *axes)(x, gs)
    incr = [d + 1 for d in axes]
    unsorted = incr + [0] + [d + 1 for d in remaining(range(len(shape_of(x))), axes)]
    return transpose(expanded, tuple(int(i) for i in np.argsort(unsorted)))


def _ragged_dot_general_impl(lhs, rhs, group_sizes, *, ragged_dot_dimension_numbers,
                             precision, preferred_element_type, group_offset, out_sharding):
    if group_offset is not None:
        raise NotImplementedError("Unimplemented group_offset support.")
    dn = ragged_dot_dimension_numbers
    lhs_rank = len(shape_of(lhs))
    mode, lhs_ragged_dim = ragged_dot_mode_and_dim(lhs_rank, dn)
    (l_contract, r_contract), (l_batch, r_batch) = dn.dot_dimension_numbers
    l_contract, r_contract = list(l_contract), list(r_contract)
    l_prefix = ragged_dot_prefix_dims(mode, lhs_rank, lhs_ragged_dim, l_batch, l_contract)
    if len(shape_of(group_sizes)) == 1:
        group_sizes = broadcast(group_sizes, [shape_of(lhs)[i] for i in l_prefix])
    incr = lambda dims: [d + 1 for d in dims]  # noqa: E731

    def dot(a, b, dims):
        return dot_general(a, b, dims, precision=precision,
                           preferred_element_type=preferred_element_type,
                           out_sharding=out_sharding)
    if mode is RaggedDotMode.RAGGED_NONCONTRACTING:
        (group_dim,) = dn.rhs_group_dimensions
        return dot(_expand(lhs, lhs_ragged_dim, group_sizes, *l_prefix), rhs,
                   ((incr(l_contract) + [0], r_contract + [group_dim]),
                    (incr(l_batch), list(r_batch))))
    if mode is RaggedDotMode.RAGGED_CONTRACTING:
        rhs_ragged_dim = r_contract[l_contract.index(lhs_ragged_dim)]
        r_prefix = ragged_dot_prefix_dims(mode, len(shape_of(rhs)), rhs_ragged_dim, r_batch,
                                          r_contract)
        return dot(_expand(lhs, lhs_ragged_dim, group_sizes, *l_prefix),
                   _expand(rhs, rhs_ragged_dim, group_sizes, *r_prefix),
                   ((incr(l_contract), incr(r_contract)),
                    ([0] + incr(l_batch), [0] + incr(r_batch))))
    return dot(lhs, rhs, dn.dot_dimension_numbers)


def _build(avals_in, params):
    return trace_to_jaxpr(lambda *args: [_ragged_dot_general_impl(*args, **params)],
                          list(avals_in))


register_decomposition(ragged_dot_general_p, _build)
