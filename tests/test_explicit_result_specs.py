"""Results under a mesh of Explicit axes against JAX 0.10.2 (4 CPU devices, a fresh
process each): every computed result's spec has one entry per dimension (``P(None,)``, not
``P()``) and its type names the context mesh, programs without operands (``arange``, a
jit of no arguments) included; ``device_put(x, P(...))`` resolves the spec on the context
mesh when traced too (typed ``f32[4@x]``), and refuses a spec without a mesh with JAX's
error; ``concatenate`` follows JAX's rule (one sharding for all operands)."""
from __future__ import annotations

from _device_scripts import jax_comparison

_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
P = jax.sharding.PartitionSpec
out = {{}}
def run(name, f):
    try:
        a = f()
        out[name] = [repr(a.sharding.spec), str(jax.typeof(a)), repr(jax.typeof(a).sharding),
                     np.asarray(a).tolist()]
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]
def traced(name, f):
    try:
        seen = []
        jax.jit(lambda: seen.append(str(jax.typeof(f()))) or 0)()
        out["jit " + name] = seen[0]
    except Exception as e:
        out["jit " + name] = [type(e).__name__, str(e)]
mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)
run("spec without a mesh", lambda: jax.device_put(np.ones(4), P("x")))
traced("spec without a mesh", lambda: jax.device_put(np.ones(4), P("x")))
with jax.set_mesh(mesh):
    x = jax.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), P("x", None))
    y = jax.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), P(None, "y"))
    u = jnp.ones((4, 4))
    v = jnp.ones(4)
    cases = {{
        "arange": lambda: jnp.arange(4), "iota": lambda: jax.lax.iota(np.int32, 4),
        "jit_zeros": lambda: jax.jit(lambda: jnp.zeros((2, 2)))(),
        "jit_arange": lambda: jax.jit(lambda: jnp.arange(6).reshape(2, 3))(),
        "eye": lambda: jnp.eye(3), "zeros": lambda: jnp.zeros((4, 4)), "scalar": lambda: jnp.zeros(()),
        "asarray": lambda: jnp.asarray(np.ones(3)), "sum0": lambda: jnp.sum(x, axis=0),
        "sum1": lambda: jnp.sum(x, axis=1), "x+u": lambda: x + u, "x+v": lambda: x + v,
        "bcast": lambda: jnp.broadcast_to(v, (4, 4)), "x.T": lambda: x.T,
        "dp_spec": lambda: jax.device_put(np.ones(4, np.float32), P("x")),
        "jit_dp_spec": lambda: jax.jit(lambda a: jax.device_put(a, P("x")))(np.ones(4, np.float32)),
        "dp_P()": lambda: jax.device_put(np.ones((4, 4)), P()),
        "concat_mixed": lambda: jnp.concatenate([x, u]), "concat_xx": lambda: jnp.concatenate([x, x]),
        "concat_xx1": lambda: jnp.concatenate([x, x], axis=1), "concat_xy": lambda: jnp.concatenate([x, y], 1),
        "concat_numpy": lambda: jnp.concatenate([x, np.ones((4, 4), np.float32)]),
        "stack": lambda: jnp.stack([x, x]), "hstack": lambda: jnp.hstack([y, y]),
        "concat_uu": lambda: jnp.concatenate([u, u]),
    }}
    for k, f in cases.items():
        run(k, f)
        traced(k, f)
print(json.dumps(out))
"""

_NAMES = ["spec without a mesh", "jit spec without a mesh"] + [
    p + k for k in ("arange", "iota", "jit_zeros", "jit_arange", "eye", "zeros", "scalar",
                    "asarray", "sum0", "sum1", "x+u", "x+v", "bcast", "x.T", "dp_spec",
                    "jit_dp_spec", "dp_P()", "concat_mixed", "concat_xx", "concat_xx1",
                    "concat_xy", "concat_numpy", "stack", "hstack", "concat_uu")
    for p in ("", "jit ")]


outputs, test_explicit_mesh_results_as_jax = jax_comparison(_SCRIPT, 4, _NAMES)
