"""Batching of a compiled ``pallas_call`` as JAX batches it: the batch becomes a new leading
grid axis (``parallel``), each batched operand and every output gets a leading squeezed
block dimension indexed by it, unbatched operands keep their blocks (the same for every
batch index), and the kernel itself is unchanged (its ``program_id`` axes keep their
numbers: the new grid index is an extra argument it ignores). Calls this cannot express
(batched scalar-prefetch operands, batched rank-1 operands, aliased operands) run once per
batch lane in a ``scan`` instead; the results are the same."""
from __future__ import annotations

import numpy as np

from traxla.batching.batch_trace import moveaxis, register_batching
from traxla.batching.rules._util import scan_lanes
from traxla.ir.avals import ShapedArray
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr, Var, has_subjaxprs
from traxla.ir.rules.pallas import BlockMapping, KernelSpec, pallas_call_p, scaled_cost

_I32 = ShapedArray((), np.dtype(np.int32))


def _with_batch_index(closed, batched):
    """An index map taking the batch index first, returning it first when ``batched``."""
    jaxpr = closed.jaxpr
    b = Var(_I32)
    outvars = [b, *jaxpr.outvars] if batched else list(jaxpr.outvars)
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, [b, *jaxpr.invars], outvars, jaxpr.eqns),
                       closed.consts)


def _batched_block(block, size, batched):
    if not batched:
        return BlockMapping(block.array_aval, block.block_shape, block.memory_space,
                            _with_batch_index(block.index_map, False), block.origin,
                            block.squeezed)
    aval = block.array_aval
    return BlockMapping(ShapedArray((size, *aval.shape), aval.dtype), (1, *block.block_shape),
                        block.memory_space, _with_batch_index(block.index_map, True),
                        block.origin, (True, *block.squeezed))


def _shifted_axes(jaxpr):
    """``jaxpr`` with each ``num_programs`` (a grid axis of traced size) one axis further:
    the batch axis comes first in the batched kernel's grid."""
    eqns, changed = [], False
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "num_programs":
            eqn, changed = eqn.replace(params={"axis": eqn.params["axis"] + 1}), True
        elif has_subjaxprs(eqn.params):
            params = {}
            for k, v in eqn.params.items():
                if isinstance(v, ClosedJaxpr):
                    inner = _shifted_axes(v.jaxpr)
                    v = v if inner is v.jaxpr else ClosedJaxpr(inner, v.consts)
                elif isinstance(v, Jaxpr):
                    v = _shifted_axes(v)
                elif type(v) is tuple and v and all(isinstance(b, ClosedJaxpr) for b in v):
                    v = tuple(ClosedJaxpr(_shifted_axes(b.jaxpr), b.consts) for b in v)
                params[k] = v
            eqn, changed = eqn.replace(params=params), True
        eqns.append(eqn)
    return Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, eqns) if changed else jaxpr


def _grid_axis(size, vals, dims, kernel, out_avals, **params):
    nprefetch = kernel.num_scalar_prefetch
    nbounds = sum(g is None for g in kernel.grid)  # (the traced grid sizes: operands first)
    operands = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
    batched = [d is not None for d in dims][nbounds + nprefetch:]
    jaxpr = kernel.jaxpr.jaxpr
    if nbounds:
        jaxpr = _shifted_axes(jaxpr)
    spec = KernelSpec(
        name=kernel.name,
        jaxpr=ClosedJaxpr(Jaxpr(jaxpr.constvars, [Var(_I32), *jaxpr.invars], jaxpr.outvars,
                                jaxpr.eqns), kernel.jaxpr.consts),
        grid=(size, *kernel.grid),
        in_blocks=[_batched_block(b, size, m) for b, m in zip(kernel.in_blocks, batched)],
        out_blocks=[_batched_block(b, size, True) for b in kernel.out_blocks],
        num_scalar_prefetch=nprefetch, prefetch_avals=kernel.prefetch_avals,
        scratch_avals=kernel.scratch_avals,
        dimension_semantics=("parallel", *kernel.dimension_semantics),
        vmem_limit_bytes=kernel.vmem_limit_bytes, compiler_params=kernel.compiler_params,
        source=kernel.source, cost_estimate=scaled_cost(kernel.cost_estimate, size),
        metadata=kernel.metadata)
    out_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in out_avals)
    return pallas_call_p.bind(*operands, kernel=spec, out_avals=out_avals, **params)


def _pallas_call_batched(size, vals, dims, *, kernel, **params):
    # (the traced grid sizes, then the scalar prefetch: batched, they need a call per lane)
    nprefetch = kernel.num_scalar_prefetch + sum(g is None for g in kernel.grid)
    per_lane = (any(d is not None for d in dims[:nprefetch])
                or params["input_output_aliases"]
                or any(d is not None and len(b.block_shape) < 2
                       for d, b in zip(dims[nprefetch:], kernel.in_blocks))
                or any(len(b.block_shape) < 2 for b in kernel.out_blocks))
    if per_lane:
        args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(vals, dims)]
        out = scan_lanes(lambda *ops: pallas_call_p.bind(*ops, kernel=kernel, **params),
                         args, list(dims))
    else:
        out = _grid_axis(size, vals, dims, kernel, **params)
    return list(out), [0] * len(out)


register_batching(pallas_call_p, _pallas_call_batched)
