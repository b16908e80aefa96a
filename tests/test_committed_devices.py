"""Committed arrays against JAX 0.10.2: ``device_put`` onto a device (the default one
included) or a SingleDeviceSharding commits the array, and what a computation makes of
committed operands is committed too; ``.device``, ``.devices()`` and ``.sharding`` of such
arrays; and JAX's "incompatible devices" error for committed operands on different devices,
or on other devices than the ``set_mesh`` context mesh (2 CPU devices, a fresh process)."""
from __future__ import annotations

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
from _device_scripts import jax_comparison

jax = pytest.importorskip("jax")


def _placements(api, np_, sds):
    d = api.devices()[0]
    x = np.arange(3.0, dtype=np.float32)
    c = api.device_put(x, d)
    made = {"device": c, "sharding": api.device_put(x, sds(d)),
            "cpu": api.device_put(x, api.devices("cpu")[0]), "none": api.device_put(x),
            "jit_committed": api.jit(lambda a: a + 1)(c),
            "jit_uncommitted": api.jit(lambda a: a + 1)(api.device_put(x)),
            "eager": c + 1, "mixed": c + np_.zeros(3), "again": api.device_put(c),
            "asarray_device": np_.asarray(x, device=d), "zeros_device": np_.zeros(3, device=d),
            "zeros": np_.zeros(3), "asarray_committed": np_.asarray(c), "copy": c.copy(),
            "copy_uncommitted": np_.ones(3).copy(), "dlpack_numpy": np_.from_dlpack(x),
            "dlpack_array": np_.from_dlpack(c)}
    return {k: (a.committed, a._committed, repr(a.sharding), a.device == d,
                a.devices() == {d}, a.sharding == sds(d)) for k, a in made.items()}


def test_device_put_onto_the_default_device_commits_as_jax():
    ours = _placements(traxla, tnp, traxla.sharding.SingleDeviceSharding)
    assert ours == _placements(jax, jax.numpy, jax.sharding.SingleDeviceSharding)
    assert ours["device"][0] and not ours["none"][0]


def test_committed_default_device_array_reads_back_and_exports():
    c = traxla.device_put(np.arange(3.0, dtype=np.float32), traxla.devices()[0])
    np.testing.assert_array_equal(np.asarray(c), [0.0, 1.0, 2.0])
    assert c.unsafe_buffer_pointer() == c.addressable_shards[0].data.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.from_dlpack(c), [0.0, 1.0, 2.0])


def test_committed_default_device_arrays_take_the_hit_paths(monkeypatch):
    """They run the default device's cached programs (jit's and the eager operators'),
    and what comes out stays committed."""
    from traxla.api.jit_function import PjitFunction
    from traxla.numpy import _eager
    c = traxla.device_put(np.arange(3.0, dtype=np.float32), traxla.devices()[0])
    u = tnp.ones(3)
    one, two = traxla.jit(lambda a: a * 2), traxla.jit(lambda a, b: a - b)
    warm = [one(c), two(c, u), two(u, c), c + u, -c, c + 1]
    monkeypatch.setattr(PjitFunction, "_call_slow", lambda *a: pytest.fail("slow path"))
    before = _eager.stats["fallback"]
    outs = [one(c), two(c, u), two(u, c), c + u, -c, c + 1, one(u)]
    assert _eager.stats["fallback"] == before
    assert [o.committed for o in outs] == [True] * 6 + [False]
    for got, want in zip(outs, warm):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


_SCRIPT = """
import json
import numpy as np
import {lib} as jax
import {lib}.numpy as jnp
out = {{}}
def run(name, f):
    try:
        a = f()
        out[name] = [a.committed, repr(a.sharding), repr(a.device), sorted(d.id for d in a.devices())]
    except Exception as e:
        out[name] = [type(e).__name__, str(e)]
x = np.arange(4.0, dtype=np.float32)
c0, c1 = (jax.device_put(x, d) for d in jax.devices())
u = jnp.ones(4)
def f(a, b):
    return a * b
run("dev1", lambda: c1)
run("jit_dev1", lambda: jax.jit(lambda a: a + 1)(c1))
run("jit_u_dev1", lambda: jax.jit(f)(u, c1))
run("zeros_dev1", lambda: jnp.zeros(3, device=jax.devices()[1]))
run("asarray_dev1", lambda: jnp.asarray(x, device=jax.devices()[1]))
run("two_devices", lambda: jax.device_put(x, jax.sharding.NamedSharding(
    jax.make_mesh((2,), ("x",)), jax.sharding.PartitionSpec("x"))))
run("copy_two_devices", lambda: jax.device_put(x, jax.sharding.NamedSharding(
    jax.make_mesh((2,), ("x",)), jax.sharding.PartitionSpec("x"))).copy())
run("copy_dev1", lambda: c1.copy())
run("jit_01", lambda: jax.jit(f)(c0, c1))
run("jit_u_1_0", lambda: jax.jit(lambda p, q, r: p + q + r)(u, c1, c0))
run("jit_tree", lambda: jax.jit(lambda d: d["a"] * d["b"])({{"a": c0, "b": c1}}))
for kind in ("Auto", "Explicit"):
    mesh = jax.make_mesh((2,), ("x",), axis_types=(getattr(jax.sharding.AxisType, kind),))
    with jax.set_mesh(mesh):
        run(kind + "_jit0", lambda: jax.jit(lambda a: a * 2)(c0))
        run(kind + "_jit1", lambda: jax.jit(f)(c1, u))
print(json.dumps(out))
"""

# JAX's eager operations are jitted jax.numpy functions, whose error names their own
# argument (``x of multiply``); traxla's eager operation is one primitive, named as such.
_NAMES = ["dev1", "jit_dev1", "jit_u_dev1", "zeros_dev1", "asarray_dev1", "two_devices",
          "copy_two_devices", "copy_dev1",
          "jit_01", "jit_u_1_0", "jit_tree", "Auto_jit0", "Auto_jit1", "Explicit_jit0",
          "Explicit_jit1"]


outputs, test_committed_devices_as_jax = jax_comparison(_SCRIPT, 2, _NAMES)
