"""What orbax (flax's checkpointing) reaches for, on 4 CPU devices against JAX 0.10.2 (a
fresh process each): Array shards (``replica_id``, ``data`` a committed one-device
Array, a one-device array's shard data being itself), ``addressable_data``,
``copy_to_host_async``, SingleDeviceSharding's ``memory_kind``, ``device_put`` to a
Format; and in-process: ``jax._src.distributed.global_state``, the deprecated
``jax.experimental.pjit.pjit``, the TensorStore names traxla does not provide (clear
errors), ``jax.extend.ifrt_programs`` and ``jax.interpreters.pxla``."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from _device_scripts import run_json_script

import traxla


_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
from {lib}.experimental.layout import Format
N, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
out = {{}}
def run(name, f):
    try:
        out[name] = f()
    except Exception as e:
        out[name] = type(e).__name__ + ": " + str(e)
m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
a = jax.device_put(np.arange(8.0).reshape(4, 2), N(m, P("x")))
run("shards", lambda: [[s.device.id, str(s.index), s.replica_id, type(s.data).__name__,
                        repr(s.data.sharding), s.data.committed, np.asarray(s.data).tolist()]
                       for s in a.addressable_shards])
b = jnp.ones(3)
run("one_device", lambda: [b.addressable_shards[0].data is b, b.addressable_shards[0].replica_id])
run("addressable_data", lambda: np.asarray(a.addressable_data(2)).tolist())
run("copy_to_host_async", lambda: [a.copy_to_host_async(), np.asarray(a).tolist()])
d2 = jax.devices()[2]
run("put_device", lambda: [repr(jax.device_put(np.ones(2), d2).sharding),
                           jax.device_put(np.ones(2), d2).committed])
S = jax.sharding.SingleDeviceSharding
run("memory_kind", lambda: [repr(S(d2, memory_kind="pinned_host")),
                            S(d2, memory_kind="device") == S(d2),
                            S(d2, memory_kind="pinned_host") == S(d2)])
run("put_format", lambda: [repr(jax.device_put(np.ones(2), Format(None, S(d2))).sharding),
                           repr(jax.device_put(np.ones(4), Format(None, N(m, P("x")))).sharding)])
print(json.dumps(out))
"""


def _run(lib):
    return run_json_script(_SCRIPT, lib, devices=4)


@pytest.fixture(scope="module")
def results():
    return _run("traxla"), _run("jax")


@pytest.mark.parametrize("name", ["shards", "one_device", "addressable_data",
                                  "copy_to_host_async", "put_device", "memory_kind",
                                  "put_format"])
def test_matches_jax(results, name):
    got, want = results
    assert got[name] == want[name]


def test_distributed_global_state_without_a_job():
    from traxla._src import distributed
    assert distributed.global_state.client is None
    assert distributed.global_state.process_id == 0
    assert distributed.global_state.num_processes == 1


def test_pjit_is_jit_with_a_deprecation_warning():
    import traxla.experimental.pjit as pjit_module
    pjit_module.__getattr__.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjit = pjit_module.pjit
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert float(pjit(lambda x: x * 2)(np.float32(3))) == 6.0
    with pytest.raises(AttributeError):
        pjit_module.no_such_name


def test_array_serialization_names_say_traxla_lacks_them():
    from traxla.experimental.array_serialization import serialization as ser
    assert ser.is_remote_storage("gs://bucket/x") and not ser.is_remote_storage({"driver": "file"})
    assert ser.is_remote_storage({"kvstore": {"driver": "s3", "path": "p"}})
    assert issubclass(ser.GlobalAsyncCheckpointManager, ser.GlobalAsyncCheckpointManagerBase)
    with pytest.raises(NotImplementedError, match="TensorStore"):
        ser.GlobalAsyncCheckpointManager()
    with pytest.raises(NotImplementedError, match="get_tensorstore_spec"):
        ser.get_tensorstore_spec("/tmp/x")
    with pytest.raises(AttributeError, match="async_serialize"):
        ser.async_serialize


def test_ifrt_programs_and_pxla():
    from traxla.extend import ifrt_programs
    from traxla.interpreters import pxla
    assert hasattr(ifrt_programs.ifrt_programs, "make_plugin_program")
    # (the result handlers themselves: tests/test_census_findings.py)
    assert callable(pxla.global_avals_to_results_handler)


def test_parse_flags_with_absl_parses_absl_flags_once():
    flags = pytest.importorskip("absl.flags")
    traxla.config.parse_flags_with_absl()
    assert flags.FLAGS.is_parsed()
