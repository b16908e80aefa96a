"""Two processes on loopback form one 4-device mesh (jaxlib's distributed runtime,
Gloo CPU collectives) and compute what one process computes."""
import json
import os
import socket
import textwrap

from _device_scripts import ForkServer

SCRIPT = textwrap.dedent("""
    import sys, json
    import numpy as np
    pid, nproc, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    import traxla as jax, traxla.numpy as jnp
    from traxla.sharding import PartitionSpec as P
    from traxla.experimental import multihost_utils
    initialized = [jax.distributed.is_initialized()]
    if nproc > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", nproc, pid, local_device_count=4 // nproc)
        initialized.append(jax.distributed.is_initialized())
    else:
        jax.config.update('num_cpu_devices', 4)
    # Auto axes: an unplaced argument may be split by in_specs (under Explicit axes JAX
    # refuses it)
    mesh = jax.make_mesh((4,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))
    x = np.arange(16, dtype=np.float32)
    a = jax.device_put(x, jax.NamedSharding(mesh, P('x')))
    total = jax.jit(lambda a: jnp.sum(jnp.sin(a) * 2))(a)
    summed = jax.shard_map(lambda b: jax.lax.psum(b, 'x'), mesh=mesh, in_specs=P('x'),
                           out_specs=P())(x)
    res = {"pid": pid, "devices": [d.id for d in jax.devices()],
           "local": [d.id for d in jax.local_devices()],
           "total": float(np.asarray(total)),
           "summed": np.asarray(summed.addressable_shards[0].data).tolist(),
           "blocks": sorted([s.index[0].start, np.asarray(s.data).tolist()]
                            for s in a.addressable_shards),
           "jax_imported": 'jax' in sys.modules, "initialized": initialized}
    try:
        with multihost_utils.live_devices(jax.devices()) as alive:
            res["alive"] = [d.id for d in alive]
    except RuntimeError as e:
        res["alive"] = str(e)
    try:
        res["preemption"] = multihost_utils.reached_preemption_sync_point(0)
    except RuntimeError as e:
        res["preemption"] = str(e)
    if nproc > 1:
        jax.distributed.barrier("done")
    print(json.dumps(res))
    if nproc > 1:
        jax.distributed.shutdown()
""")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The processes are forked, all at once, from one that imported traxla (and nothing
# else of the script) once (tests/_device_scripts.py: ForkServer): processes of their own
# each, less a fresh interpreter's start.
_PROCESSES = ForkServer("import sys, json\nimport numpy as np\nimport traxla\n",
                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def _launch(*runs):
    """Each ``(nproc, pid, port)`` run of SCRIPT in a process of its own, all at once."""
    outs = []
    for r in _PROCESSES.run_all([(SCRIPT, [str(pid), str(nproc), str(port)])
                                 for nproc, pid, port in runs], timeout=240):
        assert r["status"] == 0, r["stderr"][-3000:] + r["note"]
        outs.append(json.loads([line for line in r["stdout"].splitlines()
                                if line.startswith("{")][-1]))
    return outs


def test_two_processes_match_one():
    port = _free_port()
    single, p0, p1 = _launch((1, 0, 0), (2, 0, port), (2, 1, port))
    assert p0["devices"] == p1["devices"] == [0, 1, 2048, 2049]   # process_index << 11 | local
    assert p0["local"] == [0, 1] and p1["local"] == [2048, 2049]
    for p in (p0, p1):
        assert abs(p["total"] - single["total"]) < 1e-4
        assert p["summed"] == single["summed"] == [24.0, 28.0, 32.0, 36.0]
        assert not p["jax_imported"]
    assert p0["blocks"] + p1["blocks"] == single["blocks"]
    # distributed.is_initialized, multihost_utils.live_devices and the preemption sync point
    # (JAX's answers: outside a distributed job, False and its RuntimeError)
    assert single["initialized"] == [False] and p0["initialized"] == [False, True]
    assert single["alive"] == "Distributed JAX not initialized."
    assert p0["alive"] == p1["alive"] == [0, 1, 2048, 2049]
    assert single["preemption"] is False
    assert p0["preemption"] == ("Preemption sync manager has not been initialized. Make sure "
                                "the 'jax_enable_preemption_service' config is enabled.")
