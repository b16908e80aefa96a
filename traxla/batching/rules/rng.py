"""Batching the XLA generators. ``rng_bit_generator`` with batched keys draws the whole
batch from the first key (and writes the new key back there), as JAX's rule does;
``rng_uniform`` with batched bounds draws each example in turn (a scan)."""
from __future__ import annotations

from traxla import lax
from traxla.ir.rules.rng import rng_bit_generator_p, rng_uniform_p
from traxla.batching.batch_trace import bdim_at_front, moveaxis, register_batching


def _rng_bit_generator(size, vals, dims, *, shape, dtype, algorithm, out_sharding):
    keys = moveaxis(vals[0], dims[0], 0)
    new_key, bits = rng_bit_generator_p.bind(
        lax.index_in_dim(keys, 0, 0, keepdims=False), shape=(size, *shape), dtype=dtype,
        algorithm=algorithm, out_sharding=out_sharding)
    new_keys = lax._dynamic_update_index_in_dim(keys, new_key, 0, 0)
    return [new_keys, bits], [0, 0]


def _rng_uniform(size, vals, dims, *, shape):
    a, b = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))

    def draw(carry, ab):
        return carry, rng_uniform_p.bind(ab[0], ab[1], shape=shape)

    _, out = lax.scan(draw, (), (a, b))
    return out, 0


register_batching(rng_bit_generator_p, _rng_bit_generator)
register_batching(rng_uniform_p, _rng_uniform)
