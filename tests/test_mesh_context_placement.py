"""Under ``set_mesh`` (a concrete mesh, Auto axes), computations go on the context mesh, on
4 CPU devices against JAX 0.10.2 (a fresh process each): new arrays, eager operations,
keys and jitted calls with uncommitted operands give ``NamedSharding(mesh, P())``,
committed; placed operands keep their layout; ``device_put`` without a sharding stays on
the default device, uncommitted; a jitted function first called outside the mesh is not
served from its single-device programs inside it, nor the reverse."""
from __future__ import annotations

import pytest

from _device_scripts import run_json_script

_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
N, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
out = {{}}
def run(name, f):
    try:
        x = f()
        out[name] = [repr(x.sharding), x.committed, np.asarray(x).tolist()
                     if not jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else None]
    except Exception as e:
        out[name] = type(e).__name__
m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
unc = jnp.arange(4.0)
placed = jax.device_put(np.arange(4.0), N(m, P("x")))
double = jax.jit(lambda a: a * 2)
run("before", lambda: double(unc))
with jax.set_mesh(m):
    run("ones", lambda: jnp.ones(4))
    run("asarray", lambda: jnp.asarray(np.ones(4)))
    run("key", lambda: jax.random.key(0))
    run("normal", lambda: jax.random.normal(jax.random.key(0), (4,)))
    run("device_put", lambda: jax.device_put(np.ones(4)))
    run("eager_add", lambda: unc + 1)
    run("eager_placed", lambda: placed + 1)
    run("jit_unc", lambda: double(unc))
    run("jit_np", lambda: double(np.ones(4)))
    run("jit_noargs", lambda: jax.jit(lambda: jnp.ones(3))())
    run("jit_placed", lambda: double(placed))
    run("jit_out", lambda: jax.jit(lambda a: a * 2, out_shardings=P("x"))(unc))
    run("jit_mixed", lambda: jax.jit(lambda a, b: a * b)(unc, placed))
run("after", lambda: double(unc))
run("after_ones", lambda: jnp.ones(4))
print(json.dumps(out))
"""

_NAMES = ["before", "ones", "asarray", "key", "normal", "device_put", "eager_add",
          "eager_placed", "jit_unc", "jit_np", "jit_noargs", "jit_placed", "jit_out",
          "jit_mixed", "after", "after_ones"]


def _run(lib):
    return run_json_script(_SCRIPT, lib, devices=4)


@pytest.fixture(scope="module")
def results():
    return _run("traxla"), _run("jax")


@pytest.mark.parametrize("name", _NAMES)
def test_matches_jax(results, name):
    got, want = results
    assert got[name] == want[name]
