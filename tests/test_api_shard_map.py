"""Top-level ``shard_map`` as JAX 0.10 has it (decorator factory, mesh from
``set_mesh``, ``in_specs`` inferred from placed arguments), on 8 CPU devices in a
fresh process."""
from __future__ import annotations

import inspect
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import jax

import traxla

_REPO = pathlib.Path(__file__).resolve().parent.parent

_SCRIPT = """
import json
import numpy as np
import traxla as jax
from traxla import lax
from traxla.sharding import NamedSharding, PartitionSpec as P
out = {}
mesh = jax.make_mesh((8,), ("x",))
x = np.arange(16.0, dtype=np.float32)
# make_mesh's axes are Explicit: an argument's type must be split as its in_specs say
x_split = jax.device_put(x, NamedSharding(mesh, P("x")))

@jax.shard_map(mesh=mesh, in_specs=P("x"), out_specs=P())
def total(a):
    return lax.psum(a.sum(keepdims=True), "x")
out["factory"] = np.asarray(total(x_split)).tolist()
try:
    total(x)
except ValueError as e:
    out["unsplit"] = str(e)
with jax.set_mesh(mesh):
    out["context_mesh"] = np.asarray(jax.shard_map(lambda a: a * 2, in_specs=P("x"),
                                                   out_specs=P("x"))(x_split)).tolist()
    xs = jax.device_put(x, NamedSharding(mesh, P("x")))
    g = jax.shard_map(lambda a: lax.psum(a.sum(keepdims=True), "x"), out_specs=P())
    out["inferred"] = np.asarray(g(xs)).tolist() + np.asarray(g(xs)).tolist()
    try:
        g(x)
    except ValueError as e:
        out["unplaced"] = str(e)
    # eager operations on an array spread over the mesh run as one-equation SPMD programs
    z = (xs * 2 + 1).sum()
    out["eager"] = [float(z), float(jax.numpy.max(xs)), str(jax.typeof(xs * 2))]
try:
    jax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P("x"))(x)
except ValueError as e:
    out["no_mesh"] = str(e)
# jit's in_shardings/out_shardings lay arguments and results out on the mesh
row = NamedSharding(mesh, P("x"))
f = jax.jit(lambda a: a * 2, in_shardings=row, out_shardings=NamedSharding(mesh, P()))
y = f(x)
out["out_sharding"] = [list(y.sharding.spec), np.asarray(y).tolist()[:3]]
with jax.set_mesh(mesh):  # specs resolved against the context mesh; per-argument tuples
    h = jax.jit(lambda a, b: a + b, in_shardings=(P("x"), None), out_shardings=P())
    out["spec_shardings"] = [list(h(x, x).sharding.spec), np.asarray(h(x, x)).tolist()[:2]]
out["default_out"] = list(jax.jit(lambda a: a * 2, in_shardings=row)(x).sharding.spec)
lowered = f.lower(x).as_text()
out["in_sharding_text"] = "sdy.sharding" in lowered
print(json.dumps(out))
"""


def test_shard_map_signature_matches_jax():
    ours = inspect.signature(traxla.shard_map)
    theirs = inspect.signature(jax.shard_map)
    assert list(ours.parameters) == list(theirs.parameters)
    assert [p.kind for p in ours.parameters.values()] == [
        p.kind for p in theirs.parameters.values()]


def test_shard_map_forms_on_eight_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(_REPO))
    env.pop("TRAXLA_NUM_CPU_DEVICES", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_SCRIPT)], capture_output=True,
                          text=True, timeout=300, env=env, cwd=str(_REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["factory"] == [120.0]
    assert out["unsplit"].startswith(  # JAX's message
        "in_specs passed to shard_map: P('x',) does not match the specs of the input: P(None,) "
        "for arg: float32[16].")
    assert out["context_mesh"] == [2.0 * i for i in range(16)]
    assert out["inferred"] == [120.0, 120.0]
    assert "in_specs=Infer" in out["unplaced"]
    assert out["eager"][:2] == [256.0, 15.0]
    assert "The context mesh cannot be empty" in out["no_mesh"]
    assert out["out_sharding"] == [[None], [0.0, 2.0, 4.0]]  # replicated, as asked
    assert out["spec_shardings"] == [[None], [0.0, 2.0]]
    assert out["default_out"] == ["x"]  # without out_shardings the result stays split
    assert out["in_sharding_text"]
