"""``P.UNCONSTRAINED`` and the shardings of ``with_sharding_constraint``, on 4 CPU devices,
against JAX 0.10.2 (a fresh process each): the singleton's repr and pickling, refused on a
mesh with no Auto axis, lowered as an open dimension (``{?}``) in a jitted program and left
whole eagerly; shardings as a pytree prefix of the value, with JAX's prefix error; a
constraint on PRNG keys (over their stored rank)."""
from __future__ import annotations

import pickle

import pytest

from _device_scripts import run_json_script

from traxla.sharding import PartitionSpec


_SCRIPT = """
import json, pickle
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
N, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
out = {{}}
def run(name, f):
    try:
        out[name] = f()
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e)
auto = (jax.sharding.AxisType.Auto,) * 2
m = jax.make_mesh((2, 2), ("x", "y"), axis_types=auto)
me = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
s = N(m, P("x", P.UNCONSTRAINED))
run("repr", lambda: [repr(P.UNCONSTRAINED), repr(s), s.is_fully_replicated,
                     pickle.loads(pickle.dumps(P.UNCONSTRAINED)) is P.UNCONSTRAINED])
run("explicit", lambda: repr(N(me, P(P.UNCONSTRAINED))))
f = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, s))
x = np.arange(16.0).reshape(4, 4)
run("jaxpr", lambda: str(jax.make_jaxpr(f)(x)))
run("text", lambda: [l.strip() for l in f.lower(x).as_text().splitlines()
                     if "sharding_constraint" in l])
run("jit", lambda: [np.asarray(f(x)).tolist(), repr(f(x).sharding)])
run("eager", lambda: repr(jax.lax.with_sharding_constraint(x, s).sharding))
with jax.set_mesh(m):
    g = jax.jit(lambda a: jax.lax.with_sharding_constraint(a, P(P.UNCONSTRAINED, "y")))
    run("ctx_text", lambda: [l.strip() for l in g.lower(x).as_text().splitlines()
                             if "sharding_constraint" in l])
sx = N(m, P("x"))
def wsc(sh):
    return [repr(a.sharding) for a in jax.tree.leaves(jax.jit(
        lambda a: jax.lax.with_sharding_constraint(a, sh))({{"a": [np.ones(4), np.ones(4)]}}))]
for i, sh in enumerate([{{"a": sx}}, {{"a": [sx, N(m, P())]}}, {{"a": [sx]}}, {{"a": (sx, sx)}},
                        {{"b": sx}}]):
    run(f"prefix{{i}}", lambda: wsc(sh))
def key_wsc():
    k = jax.jit(lambda: jax.lax.with_sharding_constraint(
        jax.random.split(jax.random.key(0), 4), N(m, P("x"))))()
    return [str(k.dtype), np.asarray(jax.random.key_data(k)).tolist(), repr(k.sharding)]
run("key", key_wsc)
print(json.dumps(out))
"""


def _run(lib):
    return run_json_script(_SCRIPT, lib, devices=4)


@pytest.fixture(scope="module")
def results():
    return _run("traxla"), _run("jax")


@pytest.mark.parametrize("name", ["repr", "explicit", "jaxpr", "text", "jit", "eager",
                                  "ctx_text", "prefix0", "prefix1", "prefix2", "prefix3",
                                  "prefix4", "key"])
def test_matches_jax(results, name):
    got, want = results
    assert got[name] == want[name]


def test_singleton():
    u = PartitionSpec.UNCONSTRAINED
    assert pickle.loads(pickle.dumps(u)) is u and repr(PartitionSpec(u, "x")) == "P(UNCONSTRAINED, 'x')"
    assert PartitionSpec("x", u, ("y", "z")).axes() == ["x", "y", "z"]
