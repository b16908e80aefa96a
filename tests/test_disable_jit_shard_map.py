"""``pmap`` and ``shard_map`` under ``disable_jit`` (chex's ``fake_jit`` wraps ``pmap`` so)
run and give JAX's values: the shard_map is still compiled as one program on its mesh (it
used to call itself through the disabled jit until the recursion limit)."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import traxla as tx
import traxla.numpy as jnp


def test_pmap_under_disable_jit():
    with tx.disable_jit():
        out = tx.pmap(lambda x: x * 2 + 1, axis_size=1)(jnp.ones((1, 4)))
    with jax.disable_jit():
        ref = jax.pmap(lambda x: x * 2 + 1, axis_size=1)(jjnp.ones((1, 4)))
    np.testing.assert_array_equal(out, ref)
    assert isinstance(out, tx.Array)


def test_shard_map_under_disable_jit():
    mesh = tx.make_mesh((1,), ("x",), axis_types=(tx.sharding.AxisType.Auto,))
    P = tx.sharding.PartitionSpec
    with tx.disable_jit():
        out = tx.shard_map(lambda x: x.sum(keepdims=True), mesh=mesh, in_specs=P("x"),
                           out_specs=P("x"))(jnp.arange(4.0))
        # jit stays disabled around it
        seen = []
        tx.jit(lambda x: seen.append(type(x).__name__) or x)(jnp.ones(2))
    np.testing.assert_array_equal(out, [6.0])
    assert seen == ["ArrayImpl"]
