"""Differentiating ``linear_call`` (JAX's rules): its JVP applies the call to the
tangents; its transpose is a ``linear_call`` of the user's transpose (whose own
transpose is the callee again)."""
from __future__ import annotations

from traxla.ir.rules.linear_call import linear_call_p
from traxla.autodiff.ad import Zero, instantiate, is_undefined, jvp_rules, transpose_rules, zeros_like_aval


def _linear_call_jvp(primals, tangents, *, callee, transpose_thunk, num_callee_consts, num_res):
    n_fixed = num_callee_consts + num_res
    if any(type(t) is not Zero for t in tangents[:n_fixed]):
        raise TypeError("linear_call: the residual arguments must not be differentiated (their "
                        "tangents must be zero); pass values to differentiate as linear args.")
    params = dict(callee=callee, transpose_thunk=transpose_thunk,
                  num_callee_consts=num_callee_consts, num_res=num_res)
    primals_out = linear_call_p.bind(*primals, **params)
    tangents_out = linear_call_p.bind(*primals[:n_fixed],
                                      *[instantiate(t) for t in tangents[n_fixed:]], **params)
    return primals_out, tangents_out


def _linear_call_transpose_rule(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    transpose, t_consts = transpose_thunk()
    f_consts = list(args[:num_callee_consts])
    operands_res = list(args[num_callee_consts:num_callee_consts + num_res])
    if any(is_undefined(x) for x in f_consts + operands_res):
        raise TypeError("linear_call: only the linear arguments can be transposed.")
    cts_avals = transpose.in_avals[len(t_consts) + num_res:]

    def new_transpose_thunk():
        return callee, f_consts

    cts = [zeros_like_aval(a) if type(ct) is Zero else ct for ct, a in zip(cts, cts_avals)]
    cts_out = linear_call_p.bind(*t_consts, *operands_res, *cts, callee=transpose,
                                 transpose_thunk=new_transpose_thunk,
                                 num_callee_consts=len(t_consts), num_res=len(operands_res))
    return [None] * (num_callee_consts + num_res) + list(cts_out)


jvp_rules[linear_call_p] = _linear_call_jvp
transpose_rules[linear_call_p] = _linear_call_transpose_rule
