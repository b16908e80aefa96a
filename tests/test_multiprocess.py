"""Two processes on loopback form one 4-device mesh (jaxlib's distributed runtime,
Gloo CPU collectives) and compute what one process computes."""
import json
import os
import socket
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys, json
    import numpy as np
    pid, nproc, port = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    import traxla as jax, traxla.numpy as jnp
    from traxla.sharding import PartitionSpec as P
    if nproc > 1:
        jax.distributed.initialize(f"127.0.0.1:{port}", nproc, pid, local_device_count=4 // nproc)
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
           "jax_imported": 'jax' in sys.modules}
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


def _launch(nproc, port):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(i), str(nproc), str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for i in range(nproc)]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads([line for line in out.splitlines() if line.startswith("{")][-1]))
    return outs


def test_two_processes_match_one():
    single, = _launch(1, 0)
    p0, p1 = _launch(2, _free_port())
    assert p0["devices"] == p1["devices"] == [0, 1, 2048, 2049]   # process_index << 11 | local
    assert p0["local"] == [0, 1] and p1["local"] == [2048, 2049]
    for p in (p0, p1):
        assert abs(p["total"] - single["total"]) < 1e-4
        assert p["summed"] == single["summed"] == [24.0, 28.0, 32.0, 36.0]
        assert not p["jax_imported"]
    assert p0["blocks"] + p1["blocks"] == single["blocks"]
