"""The persistent compilation cache: hits across processes, faults (corrupt, truncated,
empty entries, unwritable directory, concurrent writers, a jaxlib change), callbacks,
eviction and the ``python -m traxla cache`` command."""
from __future__ import annotations

import json
import logging
import os
import sys

import numpy as np
import pytest
from _device_scripts import ForkServer

import traxla
import traxla.numpy as jnp
from traxla.runtime import compilation_cache as cc
from traxla.runtime import xla_adapter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


@pytest.fixture
def cache(tmp_path):
    root = str(tmp_path / "cache")
    traxla.config.update("compilation_cache_dir", root)
    traxla.config.update("persistent_cache_min_compile_time_secs", 0)
    cc.reset_stats()
    yield root
    traxla.config.update("compilation_cache_dir", None)
    traxla.config.update("persistent_cache_min_compile_time_secs", 1.0)
    traxla.config.update("compilation_cache_max_size", -1)


def _fresh(scale):
    """A new function object each call: jit's in-memory caches miss, the disk may hit."""
    def step(x):
        return jnp.tanh(x @ x.T * scale).sum()
    return traxla.jit(step)


X = np.arange(16, dtype=np.float32).reshape(4, 4) / 16


def _entries(root):
    return sorted(f for f in os.listdir(root) if f.endswith(".xla"))


def test_second_compile_of_a_program_loads_it(cache):
    want = float(_fresh(2.0)(X))
    assert cc.stats["writes"] >= 1 and cc.stats["hits"] == 0
    cc.reset_stats()
    assert float(_fresh(2.0)(X)) == want
    assert cc.stats["hits"] >= 1 and cc.stats["misses"] == 0
    manifest = cc.read_manifest(cache)
    entry = next(e for e in manifest.values() if e["name"] == "jit_step")
    assert entry["avals"] == ["f32[4,4]"] and entry["hits"] == 1 and entry["size"] > 0


def test_minimum_compile_time_keeps_fast_programs_out(cache):
    traxla.config.update("persistent_cache_min_compile_time_secs", 1e9)
    _fresh(3.0)(X)
    assert cc.stats["writes"] == 0 and cc.stats["skipped"] >= 1


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "empty", "foreign"])
def test_damaged_entries_are_logged_and_recompiled(cache, caplog, damage):
    want = float(_fresh(4.0)(X))
    for name in _entries(cache):
        path = os.path.join(cache, name)
        blob = open(path, "rb").read()
        blob = {"corrupt": blob[:-10] + b"x" * 10, "truncated": blob[: len(blob) // 2],
                "empty": b"", "foreign": b"not a cache entry at all" * 10}[damage]
        open(path, "wb").write(blob)
    cc.reset_stats()
    with caplog.at_level(logging.WARNING, logger="traxla.compilation_cache"):
        assert float(_fresh(4.0)(X)) == want
    assert cc.stats["hits"] == 0 and cc.stats["errors"] >= 1 and cc.stats["writes"] >= 1
    assert "deleting it and recompiling" in caplog.text
    cc.reset_stats()
    assert float(_fresh(4.0)(X)) == want and cc.stats["hits"] >= 1  # rewritten whole


def test_unwritable_directory_is_logged_once_and_compiling_goes_on(tmp_path, caplog):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    traxla.config.update("compilation_cache_dir", str(blocker / "cache"))  # parent is a file
    traxla.config.update("persistent_cache_min_compile_time_secs", 0)
    try:
        with caplog.at_level(logging.WARNING, logger="traxla.compilation_cache"):
            assert float(_fresh(5.0)(X)) == pytest.approx(float(
                np.tanh(X @ X.T * 5.0).sum()), rel=1e-5)
            _fresh(5.5)(X)
        assert caplog.text.count("cannot write to") == 1
    finally:
        traxla.config.update("compilation_cache_dir", None)
        traxla.config.update("persistent_cache_min_compile_time_secs", 1.0)


def test_a_jaxlib_change_recompiles_and_says_why(cache, caplog, monkeypatch):
    _fresh(6.0)(X)
    monkeypatch.setattr(xla_adapter, "JAXLIB_VERSION", "0.0.0-other")
    cc.reset_stats()
    with caplog.at_level(logging.WARNING, logger="traxla.compilation_cache"):
        out = float(_fresh(6.0)(X))
    assert cc.stats["hits"] == 0 and cc.stats["misses"] >= 1
    assert "was cached by jaxlib 0.10.2; this is jaxlib 0.0.0-other" in caplog.text
    assert out == pytest.approx(float(np.tanh(X @ X.T * 6.0).sum()), rel=1e-5)


def test_least_recently_used_entries_are_evicted_by_size(cache):
    _fresh(7.0)(X)
    size = sum(os.path.getsize(os.path.join(cache, f)) for f in _entries(cache))
    traxla.config.update("compilation_cache_max_size", size)
    _fresh(8.0)(X)  # a second program of the same size: the first goes
    manifest = cc.read_manifest(cache)
    assert len(_entries(cache)) == len(manifest)
    assert sum(e["size"] for e in manifest.values()) <= size


_CHILD = r"""
import json, sys, numpy as np, traxla, traxla.numpy as jnp
from traxla.runtime import compilation_cache as cc
traxla.config.update("compilation_cache_dir", sys.argv[1])
traxla.config.update("persistent_cache_min_compile_time_secs", 0)
seen = []
def host(x):
    seen.append(1)
    return np.asarray(x) * 3
spec = traxla.ShapeDtypeStruct((4,), np.float32)
@traxla.jit
def f(x):
    y = traxla.pure_callback(host, spec, jnp.sin(x), vmap_method="sequential")
    return (y @ jnp.cos(x)) + jnp.arange(4.0).sum()
out = f(np.linspace(0, 1, 4, dtype=np.float32))
print(json.dumps({"out": float(out), "stats": cc.stats, "callbacks": len(seen)}))
"""


# The children are processes of their own, started together where a test runs several,
# each forked from one process that imported traxla once (nothing compiled or cached in
# memory: tests/_device_scripts.py, ForkServer), instead of a fresh interpreter each.
_CHILDREN = ForkServer("import json, sys, numpy as np, traxla, traxla.numpy as jnp\n"
                       "from traxla.runtime import compilation_cache as cc\n"
                       "from traxla.sharding import Mesh, NamedSharding, PartitionSpec as P\n",
                       env=ENV)


def _results(runs):
    results = []
    for r in _CHILDREN.run_all(runs):
        assert r["status"] == 0, r["stderr"][-3000:] + r["note"]
        results.append(json.loads(r["stdout"].strip().splitlines()[-1]))
    return results


def _run_children(root, n):
    return _results([(_CHILD, [root])] * n)


def test_processes_share_entries_and_callbacks_are_reattached(tmp_path):
    root = str(tmp_path / "shared")
    first, second = _run_children(root, 2)  # two writers of the same keys at once
    assert first["out"] == second["out"] and first["callbacks"] == second["callbacks"] == 1
    (third,) = _run_children(root, 1)
    assert third["stats"]["hits"] >= 1 and third["stats"]["misses"] == 0
    assert third["out"] == first["out"] and third["callbacks"] == 1  # the callback ran


def test_cold_and_warm_start_of_the_mnist_step(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    try:
        import cache_startup
    finally:
        sys.path.pop(0)
    cold, warm = cache_startup.run_pair(str(tmp_path / "mnist"), (784, 32, 10))
    assert cold["stats"]["hits"] == 0 and cold["stats"]["writes"] >= 1
    assert warm["stats"]["misses"] == 0 and warm["stats"]["hits"] >= 1  # XLA never ran
    assert warm["checksum"] == cold["checksum"]


def test_cache_command(cache, tmp_path, capsys):
    from traxla.__main__ import main
    _fresh(9.0)(X)
    user = tmp_path / "user_prog.py"
    user.write_text("import traxla.numpy as jnp\n\ndef step(x):\n"
                    "    return jnp.tanh(x @ x.T * 9.0).sum()\n")
    assert main(["cache", "ls", "--dir", cache]) == 0
    assert "jit_step" in capsys.readouterr().out
    assert main(["cache", "stats", "--dir", cache]) == 0
    assert "entries" in capsys.readouterr().out
    assert main(["cache", "why", f"{user}:step", "--args", "f32[4,4]", "--dir", cache]) == 0
    assert capsys.readouterr().out.startswith("cached:")
    assert main(["cache", "why", f"{user}:step", "--args", "f32[4,5]", "--dir", cache]) == 1
    assert "cached for (f32[4,4]), not (f32[4,5])" in capsys.readouterr().out
    assert main(["cache", "clear", "--dir", cache]) == 0
    assert _entries(cache) == []


_SPMD_CHILD = r"""
import json, sys, numpy as np, traxla, traxla.numpy as jnp
from traxla.runtime import compilation_cache as cc
from traxla.sharding import Mesh, NamedSharding, PartitionSpec as P
traxla.config.update("num_cpu_devices", 4)
traxla.config.update("compilation_cache_dir", sys.argv[1])
traxla.config.update("persistent_cache_min_compile_time_secs", 0)
variant = sys.argv[2]
devices = traxla.devices()[::-1] if variant == "reversed devices" else traxla.devices()
mesh = Mesh(np.array(devices), ("x",))
spec = P(None) if variant == "replicated" else P("x")
x = traxla.device_put(np.arange(8, dtype=np.float32), NamedSharding(mesh, spec))
out = traxla.jit(lambda x: jnp.sin(x) * 2 + x.sum())(x)
shards = [(s.device.id, np.asarray(s.data).tolist()) for s in out.addressable_shards]
print(json.dumps({"out": np.asarray(out).tolist(), "stats": cc.stats, "shards": sorted(shards),
                  "sharding": str(out.sharding)}))
"""


def _run_spmd_children(root, variants):
    return _results([(_SPMD_CHILD, [root, v]) for v in variants])


def test_sharded_programs_are_shared_across_processes_by_sharding_and_devices(tmp_path):
    """An SPMD program on 4 CPU devices compiled in one process loads in the next; another
    sharding, or the same mesh over the devices in another order (another device
    assignment), misses and is compiled as another entry."""
    root = str(tmp_path / "spmd")
    (cold,) = _run_spmd_children(root, ["sharded"])
    assert cold["stats"]["misses"] == 1 and cold["stats"]["writes"] == 1, cold
    assert "P('x',)" in cold["sharding"]
    warm, replicated, reordered = _run_spmd_children(
        root, ["sharded", "replicated", "reversed devices"])
    assert warm["stats"]["hits"] == 1 and warm["stats"]["misses"] == 0, warm
    assert warm["out"] == cold["out"] and warm["shards"] == cold["shards"]
    assert warm["sharding"] == cold["sharding"]
    for other in (replicated, reordered):
        assert other["stats"]["hits"] == 0 and other["stats"]["misses"] == 1, other
        assert other["out"] == cold["out"]
    assert "spec=P()" in replicated["sharding"]  # a compiler's choice: no trailing Nones
    assert len(_entries(root)) == 3
