"""Differentiating ``shard_map`` (and so ``pmap``): the per-device body is differentiated
and stays one ``shard_map``. Under linearize it splits, as ``jit`` does, into a known
``shard_map`` (primal outputs and per-device residuals) and a linear one; residuals leave
the known one with a leading axis of size 1 split over the manual mesh axes. The
transpose runs the body's backward pass per device, with JAX's ``check_vma=False``
conventions (the ones traxla's collective transposes follow): the cotangent of an output
replicated over some manual axes is divided by their size, and the cotangent of an input
replicated over some manual axes is summed over them."""
from __future__ import annotations

import numpy as np

from traxla import lax
from traxla.ir import dtypes
from traxla.ir.jaxpr import ClosedJaxpr, Jaxpr
from traxla.ir.rules.collectives import psum_p, shard_map_p
from traxla.ir.sharding import PartitionSpec
from traxla.ir.sharding_ur import has_ur
from traxla.ir.sharding import PartitionSpec
from traxla.ir.thread_state import axis_env
from traxla.tracer import make_debug_info, trace_to_jaxpr
from traxla.tracer.interpret import eval_jaxpr
from traxla.tracer.traces import set_current_trace
from traxla.autodiff.ad import (Zero, backward_pass, instantiate, is_undefined, jvp_rules,
                                linearize_rules, tangent_aval, transpose_rules, zeros_like_aval)
from traxla.autodiff.rules._util import _const, jvp_of_nonzero, split_jvp_outputs
from traxla.autodiff.rules.call import _linearize_jit_jaxpr


class _MeshAxes:
    """The shard_map's mesh bound in the axis environment while a body is re-traced."""

    def __init__(self, mesh):
        self.mesh = mesh

    def __enter__(self):
        axis_env.append(self.mesh)

    def __exit__(self, *exc):
        axis_env.pop()


def _trace(fun, avals, what, mesh):
    with _MeshAxes(mesh):
        return trace_to_jaxpr(fun, list(avals), make_debug_info(fun, what, ()))


def _unmentioned(mesh, spec, manual_axes):
    """The manual mesh axes a spec does not split over (in mesh order)."""
    named = set(getattr(spec, "unreduced", ())) | set(getattr(spec, "reduced", ()))
    for p in spec:  # (an unreduced or reduced axis is no replicated one: not summed over)
        named.update(p if isinstance(p, tuple) else () if p is None else (p,))
    return tuple(n for n in mesh.axis_names if n in manual_axes and n not in named)


def _shard_map_jvp(primals, tangents, *, jaxpr, mesh, in_specs, out_specs, manual_axes,
                   check_vma):
    nonzero = [type(t) is not Zero for t in tangents]
    fun, out_zero = jvp_of_nonzero(lambda *a: eval_jaxpr(jaxpr, (), *a), tangents)
    avals = list(jaxpr.in_avals) + [tangent_aval(a) for a, nz in zip(jaxpr.in_avals, nonzero)
                                    if nz]
    body = _trace(fun, avals, "jvp", mesh)
    new_in = tuple(in_specs) + tuple(s for s, nz in zip(in_specs, nonzero) if nz)
    new_out = tuple(out_specs) + tuple(s for s, z in zip(out_specs, out_zero) if not z)
    outs = shard_map_p.bind(*primals, *[t for t in tangents if type(t) is not Zero], jaxpr=body,
                            mesh=mesh, in_specs=new_in, out_specs=new_out,
                            manual_axes=manual_axes, check_vma=check_vma)
    return split_jvp_outputs(outs, len(out_specs), out_zero)


def _residual_spec(mesh, manual_axes):
    axes = tuple(n for n in mesh.axis_names if n in manual_axes)
    return PartitionSpec(axes[0] if len(axes) == 1 else axes)


def _shard_map_linearize(trace, primals, tangents, *, jaxpr, mesh, in_specs, out_specs,
                         manual_axes, check_vma):
    nonzero = [type(t) is not Zero for t in tangents]
    with _MeshAxes(mesh):
        known, linear, sources, zero_outs = _linearize_jit_jaxpr(jaxpr, nonzero,
                                                                 list(jaxpr.in_avals))
    m = len(jaxpr.out_avals)
    res_spec = _residual_spec(mesh, manual_axes)

    def known_body(*xs):
        outs = eval_jaxpr(known, (), *xs)
        return list(outs[:m]) + [lax.expand_dims(r, (0,)) for r in outs[m:]]
    known_body = _trace(known_body, jaxpr.in_avals, "linearize", mesh)
    n_res = len(known_body.out_avals) - m
    params = dict(mesh=mesh, manual_axes=manual_axes, check_vma=check_vma)
    with set_current_trace(trace.parent):
        known_outs = shard_map_p.bind(*primals, jaxpr=known_body, in_specs=tuple(in_specs),
                                      out_specs=tuple(out_specs) + (res_spec,) * n_res, **params)
    primal_outs, res_outs = known_outs[:m], known_outs[m:]
    res_values = [res_outs[i] if kind == "out" else primals[i] for kind, i in sources]
    res_specs = [res_spec if kind == "out" else in_specs[i] for kind, i in sources]
    res_avals = [known_body.out_avals[m + i] if kind == "out" else jaxpr.in_avals[i]
                 for kind, i in sources]
    n_src = len(sources)

    def linear_body(*xs):
        res = [lax.squeeze(r, (0,)) if kind == "out" else r
               for r, (kind, _) in zip(xs[:n_src], sources)]
        return eval_jaxpr(linear, (), *res, *xs[n_src:])
    tangent_avals = list(linear.in_avals[n_src:])
    touts = []
    if linear.jaxpr.outvars:
        body = _trace(linear_body, res_avals + tangent_avals, "linearize", mesh)
        t_specs = [s for s, t in zip(in_specs, tangents) if type(t) is not Zero]
        with set_current_trace(trace.tangent_trace):
            touts = shard_map_p.bind(
                *res_values, *[t for t in tangents if type(t) is not Zero], jaxpr=body,
                in_specs=tuple(res_specs + t_specs),
                out_specs=tuple(s for s, z in zip(out_specs, zero_outs) if not z), **params)
    touts = iter(touts)
    tangent_outs = [Zero(tangent_aval(lax.aval_of(p))) if z else next(touts)
                    for p, z in zip(primal_outs, zero_outs)]
    return primal_outs, tangent_outs


def _shard_map_transpose(cts, *args, jaxpr, mesh, in_specs, out_specs, manual_axes,
                         check_vma):
    linear = [is_undefined(a) for a in args]
    if all(type(c) is Zero for c in cts):
        return [Zero(a.aval) if is_undefined(a) else None for a in args]
    cts = [instantiate(c) for c in cts]
    for k, (c, spec) in enumerate(zip(cts, out_specs)):
        n = int(np.prod([mesh.axis_size(a) for a in _unmentioned(mesh, spec, manual_axes)]))
        if n != 1 and lax.dtype_of(c) != dtypes.float0:
            # every device holds the whole cotangent of a replicated output
            cts[k] = lax.div(c, _const(c, n))
    residuals = [a for a in args if not is_undefined(a)]
    res_specs = [s for s, lin in zip(in_specs, linear) if not lin]
    lin_specs = [s for s, lin in zip(in_specs, linear) if lin]
    inner = jaxpr.jaxpr
    res_vars = [v for v, lin in zip(inner.invars, linear) if not lin]
    lin_vars = [v for v, lin in zip(inner.invars, linear) if lin]
    n_ct = len(cts)

    def transposed(*xs):
        ct, res = xs[:n_ct], xs[n_ct:]
        view = ClosedJaxpr(Jaxpr(list(inner.constvars) + res_vars, lin_vars, inner.outvars,
                                 inner.eqns), list(jaxpr.consts) + list(res))
        in_cts = backward_pass(view, list(ct))
        out = []
        for c, v, spec in zip(in_cts, lin_vars, lin_specs):
            c = zeros_like_aval(v.aval) if type(c) is Zero else c
            axes = _unmentioned(mesh, spec, manual_axes)
            out.append(psum_p.bind(c, axes=axes, axis_index_groups=None) if axes else c)
        return out

    # cotangent types and specs: unreduced and reduced swap (JAX's cotangent map)
    ct_avals = [a.to_ct_aval() if has_ur(a) else tangent_aval(a) for a in jaxpr.out_avals]
    body = _trace(transposed, ct_avals + [v.aval for v in res_vars], "transpose", mesh)
    ct_spec = lambda s: s.to_ct_spec() if isinstance(s, PartitionSpec) else s  # noqa: E731
    outs = iter(shard_map_p.bind(*cts, *residuals, jaxpr=body, mesh=mesh,
                                 in_specs=tuple(map(ct_spec, out_specs)) + tuple(res_specs),
                                 out_specs=tuple(map(ct_spec, lin_specs)),
                                 manual_axes=manual_axes, check_vma=check_vma))
    return [next(outs) if lin else None for lin in linear]


jvp_rules[shard_map_p] = _shard_map_jvp
linearize_rules[shard_map_p] = _shard_map_linearize
transpose_rules[shard_map_p] = _shard_map_transpose
