"""Lowering of ``rng_bit_generator`` (a u32[4] key is viewed as u64[2]; 8- and 16-bit
outputs come from the 32-bit generator, as JAX does) and ``rng_uniform``."""
from __future__ import annotations

import numpy as np

from traxla.ir.rules.rng import RandomAlgorithm, rng_bit_generator_p, rng_uniform_p
from traxla.lowering.mlir import aval_type, constant, hlo, ir
from traxla.lowering.registry import register_lowering

_ALGORITHMS = {RandomAlgorithm.RNG_DEFAULT: "DEFAULT", RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
               RandomAlgorithm.RNG_PHILOX: "PHILOX"}


def _rng_bit_generator(ctx, key, *, shape, dtype, algorithm, out_sharding):
    key_aval, bits_aval = ctx.avals_out
    u32 = ir.IntegerType.get_unsigned(32)
    u64 = ir.IntegerType.get_unsigned(64)
    is_u32_key = key_aval.dtype == np.uint32
    if is_u32_key:
        key = hlo.bitcast_convert(ir.RankedTensorType.get([2], u64),
                                  hlo.reshape(ir.RankedTensorType.get([2, 2], u32), key))
    out_type = aval_type(bits_aval)
    if np.dtype(dtype).itemsize < 4:
        gen_type = ir.RankedTensorType.get(list(shape), u32)
    else:
        gen_type = out_type
    attr = hlo.RngAlgorithmAttr.get(_ALGORITHMS[RandomAlgorithm(algorithm)])
    out_key, bits = hlo.RngBitGeneratorOp(key.type, gen_type, attr, key).results
    if is_u32_key:
        out_key = hlo.reshape(ir.RankedTensorType.get([4], u32),
                              hlo.bitcast_convert(ir.RankedTensorType.get([2, 2], u32), out_key))
    if gen_type != out_type:
        bits = hlo.convert(out_type, bits)
    return [out_key, bits]


def _rng_uniform(ctx, a, b, *, shape):
    dims = constant(np.array(ctx.aval_out.shape, np.int64), np.int64)
    return hlo.rng(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM"))


register_lowering(rng_bit_generator_p, _rng_bit_generator)
register_lowering(rng_uniform_p, _rng_uniform)
