"""``lax.psend`` / ``lax.precv`` against JAX 0.10.2 on four CPU devices: the equations inside
shard_map, JAX's error on CPU (GPU only), the send/recv of a "cuda" lowering, JAX's error for
a permutation with repeated sources; a token returned from shard_map is refused clearly."""
from __future__ import annotations

import pytest

from tests._device_scripts import run_json_script

_SCRIPT = """
import json, numpy as np
import {lib} as lib
from tests._outcomes import outcome
P = lib.sharding.PartitionSpec
mesh = lib.sharding.Mesh(np.array(lib.devices()), ("x",))
x = np.arange(8., dtype=np.float32)
def pair(perm):
    def body(a):
        tok = lib.lax.psend(a, "x", perm)
        return lib.lax.precv(tok, lib.ShapeDtypeStruct(a.shape, a.dtype), "x", perm)
    return lib.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
f = pair([(0, 1), (2, 3)])
text = str(lib.make_jaxpr(f)(x))
out = {{"eqns": [l.strip() for l in text.splitlines() if "psend" in l or "precv" in l]}}
out["cpu"] = outcome(lambda: lib.jit(f).lower(x).as_text())
cuda = lib.jit(f).trace(x).lower(lowering_platforms=("cuda",)).as_text()
out["cuda"] = [l.strip() for l in cuda.splitlines() if "stablehlo.send" in l or "stablehlo.recv" in l
               or "create_token" in l]
out["repeated"] = outcome(lambda: lib.jit(pair([(0, 1), (0, 2)])).trace(x).lower(
    lowering_platforms=("cuda",)).as_text())
print(json.dumps(out))
"""


def test_psend_precv_match_jax_on_four_devices():
    theirs = run_json_script(_SCRIPT, "jax", 4)
    ours = run_json_script(_SCRIPT, "traxla", 4)
    assert ours == theirs
    assert theirs["eqns"][0] == "d:Tok = psend[axis_name=('x',) perm=((0, 1), (2, 3))] c"
    assert theirs["cpu"] == "NotImplementedError: psend is currently only implemented on GPU"
    assert "source_target_pairs = dense<[[0, 1], [2, 3]]>" in theirs["cuda"][1]
    assert theirs["repeated"] == ("ValueError: psend sources and destinations must be unique, "
                                  "got ((0, 1), (0, 2)).")


def test_a_token_out_of_shard_map_is_refused():
    # (JAX 0.10.2 fails here with "AttributeError: 'AbstractToken' object has no attribute
    # 'mat'")
    import numpy as np

    import traxla
    P = traxla.sharding.PartitionSpec
    mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("x",))
    f = traxla.shard_map(lambda a: traxla.lax.psend(a, "x", [(0, 0)]), mesh=mesh,
                         in_specs=P("x"), out_specs=P())
    with pytest.raises(TypeError, match="shard_map cannot return a token"):
        traxla.make_jaxpr(f)(np.ones(2, np.float32))


def test_vmap_of_a_batched_send_is_refused():
    import numpy as np

    import traxla
    P = traxla.sharding.PartitionSpec
    mesh = traxla.sharding.Mesh(np.array(traxla.devices()[:1]), ("x",))

    def body(a):
        def one(row):
            tok = traxla.lax.psend(row, "x", [(0, 0)])
            return traxla.lax.precv(tok, traxla.ShapeDtypeStruct(row.shape, row.dtype), "x",
                                    [(0, 0)])
        return traxla.vmap(one)(a)
    f = traxla.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(NotImplementedError, match="psend under vmap"):
        traxla.make_jaxpr(f)(np.ones((2, 3), np.float32))
