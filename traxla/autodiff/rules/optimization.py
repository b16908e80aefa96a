"""Differentiating ``reduce_precision`` (linear: the tangent is rounded the same way, as
JAX), ``optimization_barrier`` (tangents pass through a barrier of their own), ``stage``
(linear: the identity) and ``dce_sink`` (linear: the tangent is sunk too; nothing to
transpose, as JAX's ``deflinear``)."""
from __future__ import annotations

from traxla.ir.rules.optimization import (dce_sink_p, optimization_barrier_p, reduce_precision_p,
                                         stage_p)
from traxla.autodiff.ad import instantiate, jvp_rules, transpose_rules
from traxla.autodiff.rules._util import deflinear2, linear_jvp


def _reduce_precision_transpose(ct, x, **params):
    return [reduce_precision_p.bind(ct, **params)]


def _barrier_jvp(primals, tangents):
    return (optimization_barrier_p.bind(*primals),
            optimization_barrier_p.bind(*[instantiate(t) for t in tangents]))


def _barrier_transpose(cts, *args):
    return optimization_barrier_p.bind(*[instantiate(c) for c in cts])


deflinear2(reduce_precision_p, _reduce_precision_transpose)
jvp_rules[optimization_barrier_p] = _barrier_jvp
transpose_rules[optimization_barrier_p] = _barrier_transpose


deflinear2(stage_p, lambda ct, x: [ct])
jvp_rules[dce_sink_p] = linear_jvp(dce_sink_p)
transpose_rules[dce_sink_p] = lambda cts, x, **params: [None]
