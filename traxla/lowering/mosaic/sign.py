"""Mosaic lowering rule for ``sign`` (JAX 0.10.2's ``_sign_lowering_rule``, which lowers a
small function of other primitives): a signed integer is ``(x > 0) - (x < 0)``, each
comparison against a zero constant (broadcast for a vector) and widened with
``arith.extui``; an unsigned one ``x != 0``; a float its sign bit or'ed into ``1.0``'s
bits where ``|x| > 0`` (``x`` itself elsewhere: NaN and signed zeros)."""
from __future__ import annotations

import numpy as np

from traxla.ir import dtypes
from traxla.lowering.mosaic.dialects import arith, ir, math, tpu, vector
from traxla.lowering.mosaic.kernel import constant, element_type, ensure_value, register

def _cmp(pred, x, zero_of):
    return arith.cmpi(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), pred), x, zero_of())


@register("sign")
def _sign(ctx, x):
    aval = ctx.avals_in[0]
    dtype = np.dtype(aval.dtype)
    x = ensure_value(x, aval)
    elt = element_type(dtype)
    shape = list(aval.shape)

    def splat(value, t=elt):
        c = constant(value, t)
        return vector.broadcast(ir.VectorType.get(shape, t), c) if shape else c

    def widen(pred):  # bool -> the integer type (JAX's convert_element_type: extui)
        return arith.extui(ir.VectorType.get(shape, elt) if shape else elt, pred)

    if np.issubdtype(dtype, np.signedinteger):
        pos = widen(_cmp(4, x, lambda: splat(0)))  # sgt
        neg = widen(_cmp(2, x, lambda: splat(0)))  # slt
        return arith.subi(pos, neg)
    if np.issubdtype(dtype, np.unsignedinteger):
        return widen(_cmp(1, x, lambda: splat(0)))  # ne
    if dtypes.is_float(dtype) and dtype == np.float32:
        u32 = ir.IntegerType.get_signless(32)
        bitcast = tpu.bitcast if shape else arith.bitcast  # (JAX's bitcast_convert_type)
        bits = bitcast(ir.VectorType.get(shape, u32) if shape else u32, x)
        sign = arith.andi(bits, splat(0x80000000, u32))
        one = arith.ori(splat(0x3F800000, u32), sign)
        val = bitcast(ir.VectorType.get(shape, elt) if shape else elt, one)
        nonzero = arith.cmpf(ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 2),
                             math.absf(x), splat(0.0))
        return arith.select(nonzero, val, x)
    raise NotImplementedError(f"sign of {dtype} in a Pallas TPU kernel (JAX's rule depends "
                              "on the TPU generation for bf16)")
