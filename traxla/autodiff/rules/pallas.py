"""Forward mode of a compiled ``pallas_call``, as JAX's ``_pallas_call_jvp_rule``: one
kernel computing primals and tangents together. Its refs are the primal inputs, the
tangents of the inputs that have one, the primal outputs and the tangent outputs (the
tangent blocks are the primal ones); its body is the JVP of the original kernel, each
input ref's tangent a ref (reads and writes are mirrored on the tangent refs). As in JAX,
scalar prefetch and ``input_output_aliases`` are refused; so are scratch buffers (their
tangents would need scratch of their own)."""
from __future__ import annotations

import numpy as np

from traxla.autodiff.ad import Zero, jvp_flat, jvp_rules, tangent_aval
from traxla.ir.avals import ShapedArray
from traxla.ir.rules.pallas import KernelSpec, pallas_call_p, scaled_cost
from traxla.ir.rules.refs import AbstractRef
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.staging import trace_to_jaxpr

_I32 = ShapedArray((), np.dtype(np.int32))


def _pallas_call_jvp(primals, tangents, *, kernel, out_avals, input_output_aliases, **params):
    for refused, what in ((kernel.num_scalar_prefetch, "scalar prefetch"),
                          (input_output_aliases, "aliasing"),
                          (kernel.scratch_avals, "scratch buffers"),
                          (None in kernel.grid, "a grid of traced size")):
        if refused:
            raise NotImplementedError(f"JVP of the Pallas kernel `{kernel.name}` with {what} "
                                      "is not supported.")
    nonzero = [type(t) is not Zero for t in tangents]
    ngrid, nin, nout = len(kernel.grid), len(kernel.in_blocks), len(kernel.out_blocks)
    jaxpr = kernel.jaxpr
    ref_avals = [v.aval for v in jaxpr.jaxpr.invars[ngrid:]]
    in_refs, out_refs = ref_avals[:nin], ref_avals[nin:]
    tangent_in = [tangent_aval(a) for a, nz in zip(in_refs, nonzero) if nz]
    tangent_out = [tangent_aval(a) for a in out_refs]

    def body(*xs):
        idx = list(xs[:ngrid])
        rest = list(xs[ngrid:])
        p_in, rest = rest[:nin], rest[nin:]
        t_in, rest = rest[:len(tangent_in)], rest[len(tangent_in):]
        p_out, t_out = rest[:nout], rest[nout:]
        it = iter(t_in)
        ts = [next(it) if nz else Zero(tangent_aval(a))
              for a, nz in zip(in_refs, nonzero)] + list(t_out)
        jvp_flat(lambda *refs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *idx, *refs) or [],
                 [*p_in, *p_out], ts)
        return []

    new_jaxpr = trace_to_jaxpr(body, [_I32] * ngrid + in_refs + tangent_in + out_refs
                               + tangent_out)
    tangent_blocks = [b for b, nz in zip(kernel.in_blocks, nonzero) if nz]
    spec = KernelSpec(
        name=kernel.name, jaxpr=new_jaxpr, grid=kernel.grid,
        in_blocks=[*kernel.in_blocks, *tangent_blocks],
        out_blocks=[*kernel.out_blocks, *kernel.out_blocks],
        num_scalar_prefetch=0, prefetch_avals=(), scratch_avals=(),
        dimension_semantics=kernel.dimension_semantics,
        vmem_limit_bytes=kernel.vmem_limit_bytes, compiler_params=kernel.compiler_params,
        source=kernel.source, cost_estimate=scaled_cost(kernel.cost_estimate, 2),
        metadata=kernel.metadata)
    outs = pallas_call_p.bind(*primals, *[t for t in tangents if type(t) is not Zero],
                              kernel=spec, out_avals=(*out_avals, *out_avals),
                              input_output_aliases=(), **params)
    return list(outs[:nout]), list(outs[nout:])


jvp_rules[pallas_call_p] = _pallas_call_jvp
