"""Sharding paths flax and optax take, on 4 CPU devices, against JAX 0.10.2 (run in a
fresh process each, since the device count is fixed at start): a NamedSharding on an
abstract mesh resolves to the context mesh (``with_sharding_constraint``, ``jit``
``out_shardings``) and is refused by ``device_put`` and outside a mesh context with JAX's
errors; ``zeros_like``/``full_like`` of a placed Array (or a duck-typed one, a
ShapeDtypeStruct) keep its layout; a ``Format`` in
``with_sharding_constraint`` constrains by its sharding; SingleDeviceSharding's
``shard_shape`` and ``is_equivalent_to``; PRNG keys placed on a mesh (their data has a
trailing dim the sharding never splits) and passed to a jitted function beside placed
arrays; eager shard_map results placed by ``out_specs`` as given (``P(None,)``)."""
from __future__ import annotations

import pytest

from _device_scripts import run_json_script

_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
N, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
Format = __import__("{lib}.experimental.layout", fromlist=["x"]).Format
out = {{}}
def run(name, f):
    try:
        out[name] = f()
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e).splitlines()[0]
def desc(x):
    return [np.asarray(x).tolist(), repr(x.sharding)]
m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
m1 = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
s = N(m.abstract_mesh, P("x"))
run("wsc_no_context", lambda: desc(jax.lax.with_sharding_constraint(jnp.ones(4), s)))
run("put_abstract", lambda: desc(jax.device_put(jnp.ones(4), s)))
with jax.sharding.use_mesh(m) if hasattr(jax.sharding, "use_mesh") else jax.set_mesh(m):
    run("wsc_context", lambda: desc(jax.lax.with_sharding_constraint(jnp.arange(4.0), s)))
    run("jit_out", lambda: desc(jax.jit(lambda x: x * 2, out_shardings=s)(jnp.arange(4.0))))
    run("put_abstract_context", lambda: desc(jax.device_put(jnp.ones(4), s)))
    run("wsc_format", lambda: desc(jax.lax.with_sharding_constraint(
        jnp.arange(4.0), Format(None, N(m, P("y"))))))
x = jax.device_put(jnp.arange(4.0), N(m, P("x")))
run("zeros_like", lambda: desc(jnp.zeros_like(x)))
run("ones_like_int", lambda: desc(jnp.ones_like(x, dtype=jnp.int32)))
run("full_like", lambda: desc(jax.lax.full_like(x, 2.0)))
run("zeros_like_shape", lambda: desc(jnp.zeros_like(x, shape=(2,))))
class Proxy:  # a duck-typed array (flax's hijax Variable forwards these to its value)
    shape, dtype, sharding = x.shape, x.dtype, x.sharding
run("zeros_like_proxy", lambda: desc(jnp.zeros_like(Proxy())))
run("zeros_like_struct", lambda: desc(jnp.zeros_like(jax.ShapeDtypeStruct((4,), jnp.float32,
                                                                         sharding=x.sharding))))
sd = jnp.ones(2).sharding
run("single", lambda: [sd.shard_shape((3, 4)), sd.is_equivalent_to(N(m1, P()), 2),
                       sd.is_equivalent_to(N(m, P()), 2), N(m1, P("x")).is_equivalent_to(sd, 1),
                       N(m, P("x")).is_equivalent_to(N(m, P("x", None)), 2),
                       N(m, P("x")).is_equivalent_to(N(m, P()), 2),
                       [str(v) for v in sd.devices_indices_map((2,)).values()]])
k = jax.random.key(0)
ks = jax.random.split(k, 4)
def keys(a):
    return [np.asarray(jax.random.key_data(a)).tolist(), str(a.dtype), repr(a.sharding)]
run("put_key", lambda: keys(jax.device_put(k, N(m, P()))))
run("put_keys_split", lambda: keys(jax.device_put(ks, N(m, P("x")))))
# an unplaced key beside placed arrays: jit puts it on their mesh
run("jit_key_arg", lambda: desc(jax.jit(lambda x, k: x * jax.random.uniform(k, (4,)))(x, k)))
run("jit_key_out", lambda: keys(jax.jit(lambda x, k: jax.random.fold_in(k, 1))(x, k))[:2])
m2 = jax.make_mesh((4,), ("model",), axis_types=(jax.sharding.AxisType.Auto,))
for i, outs in enumerate([P(None), P(), P("model", None), (P(None), P("model"))]):
    g = (lambda x: (jax.lax.psum(x, "model"), x)) if i == 3 else (
        (lambda x: jax.lax.psum(x, "model")) if i < 2 else (lambda x: x * 2))
    f = jax.shard_map(g, mesh=m2, in_specs=P("model"), out_specs=outs)
    run(f"shard_map_out_specs{{i}}",
        lambda: [repr(a.sharding.spec) for a in jax.tree.leaves(f(jnp.ones((8, 3))))])
print(json.dumps(out))
"""


def _run(lib):
    return run_json_script(_SCRIPT, lib, devices=4)


@pytest.fixture(scope="module")
def results():
    return _run("traxla"), _run("jax")


@pytest.mark.parametrize("name", ["wsc_no_context", "put_abstract", "wsc_context", "jit_out",
                                  "put_abstract_context", "wsc_format", "zeros_like",
                                  "ones_like_int", "full_like", "zeros_like_shape", "zeros_like_proxy",
                                  "zeros_like_struct", "single",
                                  "put_key", "put_keys_split", "jit_key_arg", "jit_key_out",
                                  "shard_map_out_specs0", "shard_map_out_specs1",
                                  "shard_map_out_specs2", "shard_map_out_specs3"])
def test_matches_jax(results, name):
    got, want = results
    assert got[name] == want[name]
