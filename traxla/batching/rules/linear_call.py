"""Batching ``linear_call``: every linear operand and output at axis 0 (unbatched ones
broadcast), so that the batched transpose maps batched cotangents back to them."""
from __future__ import annotations

from traxla.ir.rules.linear_call import linear_call_p
from traxla.batching.batch_trace import batch_jaxpr, bdim_at_front, moveaxis, register_batching


def _linear_call(size, vals, dims, *, callee, transpose_thunk, num_callee_consts, num_res):
    n_fixed = num_callee_consts + num_res
    fixed = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals[:n_fixed], dims)]
    fixed_dims = [None if d is None else 0 for d in dims[:n_fixed]]
    linear = [bdim_at_front(v, d, size) for v, d in zip(vals[n_fixed:], dims[n_fixed:])]
    n_out = len(callee.out_avals)
    batched, _ = batch_jaxpr(callee, size, fixed_dims + [0] * len(linear), [0] * n_out)

    def batched_transpose_thunk():
        transpose, t_consts = transpose_thunk()
        res_dims = fixed_dims[num_callee_consts:]
        t_batched, _ = batch_jaxpr(transpose, size,
                                   [None] * len(t_consts) + res_dims + [0] * n_out,
                                   [0] * len(transpose.out_avals))
        return t_batched, t_consts

    outs = linear_call_p.bind(*fixed, *linear, callee=batched,
                              transpose_thunk=batched_transpose_thunk,
                              num_callee_consts=num_callee_consts, num_res=num_res)
    return outs, [0] * n_out


register_batching(linear_call_p, _linear_call)
