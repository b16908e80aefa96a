"""Lowering of the special-function, complex-number and ``tile`` primitives
(``ir/rules/special.py``), as JAX lowers them."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.ir.rules.special import P
from traxla.lowering.mlir import aval_type, broadcast_to, chlo, constant, hlo
from traxla.lowering.registry import register_lowering
from traxla.lowering.rules import indexing as _indexing


def _unary(op):
    def rule(ctx, x):
        return op(x)
    return rule


def _square(ctx, x):
    if dtypes.is_int(ctx.avals_in[0].dtype):
        return hlo.multiply(x, x)
    return chlo.square(x)


def _complex(ctx, x, y):
    shape = ctx.aval_out.shape
    return hlo.complex(broadcast_to(x, ctx.avals_in[0], shape),
                       broadcast_to(y, ctx.avals_in[1], shape))


def _conj(ctx, x, *, input_dtype):
    aval = ctx.avals_in[0]
    if dtypes.is_complex(aval.dtype):
        return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))
    zero = broadcast_to(constant(np.zeros((), aval.dtype), aval.dtype), aval.update(shape=()),
                        aval.shape)
    return hlo.complex(x, zero)


def _tile(ctx, x, *, reps):
    aval = ctx.avals_in[0]
    expand = aval.update(shape=tuple(j for d in aval.shape for j in (1, d)), sharding=None)
    reshaped = hlo.reshape(aval_type(expand), x)
    bshape = tuple(k for pair in zip(reps, aval.shape) for k in pair)
    broadcast = hlo.broadcast_in_dim(aval_type(aval.update(shape=bshape, sharding=None)),
                                     reshaped, list(range(2 * aval.ndim)))
    return hlo.reshape(aval_type(ctx.aval_out), broadcast)


register_lowering(P["lgamma"], _unary(chlo.lgamma))
register_lowering(P["digamma"], _unary(chlo.digamma))
register_lowering(P["erfc"], _unary(chlo.erfc))
register_lowering(P["square"], _square)
register_lowering(P["real"], _unary(hlo.real))
register_lowering(P["imag"], _unary(hlo.imag))
register_lowering(P["complex"], _complex)
register_lowering(P["conj"], _conj)
register_lowering(P["tile"], _tile)

# scatter-sub: the scatter lowering with subtraction as the combiner.
_indexing._COMBINE.setdefault("scatter-sub", hlo.subtract)
register_lowering(P["scatter-sub"], _indexing._scatter("scatter-sub"))


# -- special functions: CHLO ops where JAX emits one (polygamma, zeta, bessel_i1e); the others
# are decompositions into lax ops (JAX's ``mlir.lower_fun(igamma_impl)`` and co.), traced to a
# jaxpr by the layer that owns tracing (``traxla.lax.special`` registers the builders, see
# ``lowering/decompose.py``) and emitted inline.

def _nary(op):
    def rule(ctx, *args):
        shape = ctx.aval_out.shape
        return op(*[broadcast_to(x, a, shape) for x, a in zip(args, ctx.avals_in)])
    return rule


register_lowering(P["polygamma"], _nary(chlo.polygamma))
register_lowering(P["zeta"], _nary(chlo.zeta))
register_lowering(P["bessel_i1e"], _unary(chlo.bessel_i1e))
