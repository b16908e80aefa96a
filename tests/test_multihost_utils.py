"""multihost_utils' local <-> global conversions (and their primitives) against JAX 0.10.2
on two CPU devices of one process: values and placements, jaxprs under jit, vmap and grad,
the lowering, and JAX's errors; distributed.is_initialized and the names of the module."""
from __future__ import annotations

import jax
import jax.experimental.multihost_utils as jax_mu
import pytest

import traxla
import traxla.experimental.multihost_utils as mu
from tests._device_scripts import run_json_script

_SCRIPT = """
import json, numpy as np
import {lib} as lib
import {lib}.experimental.multihost_utils as mu
P = lib.sharding.PartitionSpec
mesh = lib.sharding.Mesh(np.array(lib.devices()), ("x",))
x = np.arange(8.).reshape(4, 2).astype(np.float32)
from tests._outcomes import outcome
out = {{}}
g = mu.host_local_array_to_global_array(x, mesh, P("x"))
out["global"] = [str(g.sharding), list(g.shape), g.committed, str(g.dtype), np.asarray(g).tolist(),
                 sorted(str(s.index) for s in g.addressable_shards)]
tree = mu.host_local_array_to_global_array({{"a": x, "b": np.int32(3)}}, mesh,
                                           {{"a": P("x"), "b": P()}})
out["tree"] = {{k: [str(v.sharding), np.asarray(v).tolist(), str(v.dtype)] for k, v in tree.items()}}
h = mu.global_array_to_host_local_array(g, mesh, P("x"))
out["local"] = [h is g, str(h.sharding)]
out["local_of_numpy"] = str(mu.global_array_to_host_local_array(np.ones(4, np.float32), mesh,
                                                               P("x")).sharding)
out["jaxpr"] = str(lib.make_jaxpr(lambda a: mu.host_local_array_to_global_array(a, mesh, P("x")) * 2)(x))
out["jaxpr_gtl"] = str(lib.make_jaxpr(lambda a: mu.global_array_to_host_local_array(a, mesh, P(None, "x")))(x))
out["lowered"] = lib.jit(lambda a: mu.host_local_array_to_global_array(a, mesh, P("x")) * 2).lower(x).as_text()
out["jit"] = np.asarray(lib.jit(lambda a: mu.host_local_array_to_global_array(a, mesh, P("x")) * 2)(x)).tolist()
out["vmap"] = str(lib.make_jaxpr(lib.vmap(lambda a: mu.host_local_array_to_global_array(a, mesh, P("x"))))(x))
out["vmap_gtl"] = str(lib.make_jaxpr(lib.vmap(lambda a: mu.global_array_to_host_local_array(a, mesh, P("x"))))(x))
out["grad"] = np.asarray(lib.grad(lambda a: (mu.host_local_array_to_global_array(a, mesh, P("x")) ** 2).sum())(x)).tolist()
out["transpose"] = str(lib.make_jaxpr(lib.linear_transpose(
    lambda a: mu.global_array_to_host_local_array(a, mesh, P("x")), x))(x))
out["none_spec"] = outcome(lambda: mu.host_local_array_to_global_array(x, mesh, None))
out["none_spec_gtl"] = outcome(lambda: mu.global_array_to_host_local_array(np.ones(3), mesh, None))
out["bad_axis"] = outcome(lambda: mu.host_local_array_to_global_array(x, mesh, P("y")))
out["indivisible"] = outcome(lambda: mu.host_local_array_to_global_array(np.ones(3), mesh, P("x")))
out["list_prefix"] = outcome(lambda: mu.host_local_array_to_global_array([x, x], mesh, [P()]))
out["short_tuple"] = outcome(lambda: mu.host_local_array_to_global_array((x, x), mesh, (P(),)))
print(json.dumps(out))
"""


def test_conversions_match_jax_on_two_devices():
    theirs = run_json_script(_SCRIPT, "jax", 2)
    ours = run_json_script(_SCRIPT, "traxla", 2)
    assert ours == theirs
    assert theirs["global"][0] == ("NamedSharding(mesh=Mesh('x': 2, axis_types=(Auto,)), "
                                   "spec=P('x',), memory_kind=device)")
    assert theirs["local"][0] is True  # a fully addressable Array is already host-local
    assert "host_local_array_to_global_array[" in theirs["jaxpr"]
    assert theirs["none_spec"].startswith("ValueError: `None` is not a valid input")


def test_distributed_is_initialized_outside_a_job():
    assert traxla.distributed.is_initialized() is jax.distributed.is_initialized() is False


def test_module_names_match_jax():
    public = {"host_local_array_to_global_array", "global_array_to_host_local_array",
              "host_local_array_to_global_array_p", "global_array_to_host_local_array_p",
              "live_devices", "reached_preemption_sync_point", "ProcessFailureError",
              "broadcast_one_to_all", "process_allgather", "assert_equal",
              "sync_global_devices"}
    assert public <= set(dir(jax_mu)) and public <= set(dir(mu))
    assert mu.host_local_array_to_global_array_p.name == \
        jax_mu.host_local_array_to_global_array_p.name
    assert mu.reached_preemption_sync_point(0) is jax_mu.reached_preemption_sync_point(0) is False
    with pytest.raises(RuntimeError, match="Distributed JAX not initialized."):
        with mu.live_devices(traxla.devices()):
            pass
    err = mu.ProcessFailureError({1})
    assert str(err) == str(jax_mu.ProcessFailureError({1})) and err.failed_devices == {1}
