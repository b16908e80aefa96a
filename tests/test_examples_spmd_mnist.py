"""examples/spmd_mnist.py on 8 CPU devices (XLA_FLAGS, in a fresh process): the
jitted, donating update partitioned over a 'batch' mesh axis gives the unsharded
losses. (Run under JAX with its imports swapped, the program gives the same losses to
1e-4; that comparison is not repeated here because an 8-device JAX process costs ~15 s.)"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

_REPO = pathlib.Path(__file__).resolve().parent.parent
_PATH = _REPO / "examples" / "spmd_mnist.py"

_SCRIPT = """
import json, sys, types, warnings
import numpy as np
source = open({path!r}).read()
for old, new in {swaps!r}.items():
    assert source.count(old) == 1, old
    source = source.replace(old, new)
module = types.ModuleType("spmd_mnist")
exec(compile(source, {path!r}, "exec"), module.__dict__)
jax = module.jax
out = {{"devices": jax.device_count()}}
kw = dict(num_steps=3, layer_sizes=(784, 64, 10), log=lambda s: None)
out["sharded"], out["sharded_acc"], _ = module.train(sharded=True, **kw)
out["single"], out["single_acc"], _ = module.train(sharded=False, **kw)
if {checks}:
    from traxla.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((8,), ("batch",), axis_types=(AxisType.Explicit,))
    with jax.set_mesh(mesh):
        params = jax.device_put(module.init_random_params(0.1, (784, 16, 10)), NamedSharding(mesh, P()))
        images, labels = module.synthetic_mnist(64)
        batch = jax.reshard((images, labels), P("batch"))
        out["batch_type"] = str(jax.typeof(batch[0]))
        update = module.make_update(0.1)
        hlo = update.lower(params, batch).compile().as_text()
        out["alias"] = "input_output_alias" in hlo
        new_params, _ = update(params, batch)
        out["donated_deleted"] = all(w.is_deleted() and b.is_deleted() for w, b in params)
        try:
            params[0][0] + 1
            out["reuse"] = "no error"
        except RuntimeError as e:
            out["reuse"] = str(e)
print(json.dumps(out))
"""


def _run(swaps, checks):
    """Runs the example in a fresh 8-device process (its imports replaced by ``swaps``)."""
    code = textwrap.dedent(_SCRIPT.format(path=str(_PATH), swaps=swaps, checks=checks))
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(_REPO))
    env.pop("TRAXLA_NUM_CPU_DEVICES", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=str(_REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def traxla_run():
    return _run({}, True)


def test_spmd_mnist_sharded_losses_equal_unsharded_and_donation_works(traxla_run):
    out = traxla_run
    assert out["devices"] == 8
    np.testing.assert_allclose(out["sharded"], out["single"], rtol=2e-5)
    assert out["sharded"][-1] < out["sharded"][0]  # it learns
    assert out["batch_type"] == "float32[64@batch,784]"
    assert out["alias"] and out["donated_deleted"]
    assert out["reuse"].startswith("Array has been deleted with shape=float32[784,16]")
