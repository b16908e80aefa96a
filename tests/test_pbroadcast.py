"""``lax.pbroadcast`` against JAX 0.10.2 on four CPU devices: the jaxpr inside shard_map,
JAX's error on CPU (it lowers for GPUs only), the GPU lowering's collective_broadcast
(lowered for "cuda" without a GPU), and vmap over a named axis."""
from __future__ import annotations

from tests._device_scripts import run_json_script

_SCRIPT = """
import json, numpy as np
import {lib} as lib
lax = lib.lax
P = lib.sharding.PartitionSpec
from tests._outcomes import outcome
out = {{}}
mesh = lib.sharding.Mesh(np.array(lib.devices()).reshape(2, 2), ("x", "y"))
f = lib.shard_map(lambda a: lax.pbroadcast(a, "y", 1), mesh=mesh, in_specs=P("x", "y"),
                  out_specs=P("x", "y"))
x = np.arange(16., dtype=np.float32).reshape(4, 4)
out["jaxpr"] = str(lib.make_jaxpr(f)(x))
out["tree"] = str(lib.make_jaxpr(lib.shard_map(
    lambda a: lax.pbroadcast({{"u": a, "v": a * 2}}, ("x", "y"), 0), mesh=mesh,
    in_specs=P("x", "y"), out_specs=P("x", "y")))(x))
out["cpu"] = outcome(lambda: f(x))
out["cpu_lower"] = outcome(lambda: lib.jit(f).lower(x).as_text())
text = lib.jit(f).trace(x).lower(lowering_platforms=("cuda",)).as_text()
out["gpu"] = [l.strip() for l in text.splitlines() if "collective_broadcast" in l]
v = lib.vmap(lambda a: lax.pbroadcast(a, "i", 2), axis_name="i")
out["vmap"] = np.asarray(v(np.arange(4., dtype=np.float32))).tolist()
out["vmap_unbatched"] = outcome(lambda: np.asarray(lib.vmap(
    lambda a: lax.pbroadcast(np.float32(3), "i", 0) + a, axis_name="i")(
        np.ones(2, np.float32))).tolist())
print(json.dumps(out))
"""


def test_pbroadcast_matches_jax_on_four_devices():
    theirs = run_json_script(_SCRIPT, "jax", 4)
    ours = run_json_script(_SCRIPT, "traxla", 4)
    assert ours == theirs
    assert theirs["cpu"] == ("NotImplementedError: MLIR translation rule for primitive "
                             "'pbroadcast' not found for platform cpu")
    assert "replica_groups = dense<[[1, 0], [3, 2]]>" in theirs["gpu"][0]
    assert theirs["vmap"] == [2.0] * 4


def test_transpose_sends_the_summed_cotangent_to_the_source():
    # (JAX 0.10.2's own transpose rule fails here: full_like of a non-scalar fill value)
    import numpy as np

    import traxla
    t = traxla.vmap(lambda c: traxla.linear_transpose(
        lambda a: traxla.lax.pbroadcast(a, "i", 1), np.float32(0))(c)[0], axis_name="i")
    assert np.asarray(t(np.arange(1., 5., dtype=np.float32))).tolist() == [0., 10., 0., 0.]
