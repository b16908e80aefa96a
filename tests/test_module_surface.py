"""Issue 41, acceptance 1: JAX 0.10.2's public module surface under traxla's ``jax`` drop-in.

``tests/data/jax_module_surface.json`` (written by ``tools/jax_module_surface.py``) holds every
public module of the installed JAX (outside ``_src`` and ``tests``) and, for each that imports
with JAX alone, its public names and their kind (module, class, function, constant). Under
``traxla.as_jax`` every module must import and every name exist with the same kind, except
those in ``tests/_module_surface_missing.py``: an allow-list that may only shrink. A module or
name that disappears fails here; one that appears while still listed fails too (drop it from
the list).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jax_module_surface  # noqa: E402
from _module_surface_missing import MISSING_MODULES, MISSING_NAMES, OUT_OF_SCOPE  # noqa: E402

PROGRAM = os.path.join(ROOT, "tests", "_module_surface_program.py")
# JAX-private paths that libraries import (issue 41's "also seen"); they must import too.
PRIVATE_PATHS = ["jax._src.flatten_util", "jax._src.numpy", "jax._src.numpy.lax_numpy",
                 "jax._src.numpy.util", "jax._src.numpy.reductions", "jax._src.pjit",
                 "jax.lib.xla_bridge"]


def _stored():
    with open(jax_module_surface.SNAPSHOT) as f:
        return json.load(f)


def test_snapshot_matches_installed_jax():
    import jax
    stored = _stored()
    assert stored["jax_version"] == jax.__version__
    now = jax_module_surface.module_names(os.path.dirname(jax.__file__))
    assert sorted(stored["modules"]) == now, "run python tools/jax_module_surface.py"


@pytest.fixture(scope="module")
def surface():
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, PROGRAM, jax_module_surface.SNAPSHOT,
                           *PRIVATE_PATHS], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _allowed_modules():
    return set(MISSING_MODULES) | {m for m in OUT_OF_SCOPE if OUT_OF_SCOPE[m] is None}


def _allowed_names(module):
    out = set(MISSING_NAMES.get(module, ()))
    scoped = OUT_OF_SCOPE.get(module)
    if scoped is not None:
        out |= set(scoped)
    return out


def test_every_module_imports(surface):
    lost = {m: e for m, e in surface["modules"].items() if m not in _allowed_modules()}
    assert not lost, "modules that no longer import under the drop-in:\n" + "\n".join(
        f"{m}: {e}" for m, e in sorted(lost.items()))


def test_every_name_exists_with_its_kind(surface):
    lost = {m: sorted(set(ns) - _allowed_names(m)) for m, ns in surface["names"].items()}
    lost = {m: ns for m, ns in lost.items() if ns}
    assert not lost, "names missing (or of another kind, name:kind-found):\n" + "\n".join(
        f"{m}: {' '.join(ns)}" for m, ns in sorted(lost.items()))


def test_allow_list_only_shrinks(surface):
    """An allow-listed module or name that is there now must leave the list."""
    stale_modules = sorted(_allowed_modules() - set(surface["modules"]))
    stale_names = {}
    for m in set(MISSING_NAMES) | {m for m, v in OUT_OF_SCOPE.items() if v is not None}:
        if m in surface["modules"]:
            continue
        there = _allowed_names(m) - set(surface["names"].get(m, ()))
        if there:
            stale_names[m] = sorted(there)
    assert not stale_modules and not stale_names, (
        f"present now, drop from tests/_module_surface_missing.py: modules {stale_modules}, "
        f"names {stale_names}")


def test_counts(surface):
    """The counts the README states (issue 41's goal: every module, >= 98% of names)."""
    mods = _stored()["modules"]
    total = sum(len(v.get("names", {})) for v in mods.values())
    missing = sum(len(mods[m].get("names", {})) for m in surface["modules"])
    missing += sum(len(ns) for m, ns in surface["names"].items())
    imported = len(mods) - len(surface["modules"])
    print(f"modules {imported}/{len(mods)}, names {total - missing}/{total}")
    assert imported >= len(mods) - len(_allowed_modules())


def test_private_paths_import(surface):
    assert not surface["private"], surface["private"]


def test_unsupported_capability_raises_on_use_not_on_import():
    """A module of a capability traxla lacks imports; using its names raises
    NotImplementedError naming the capability (never a made-up result)."""
    import importlib
    jax2tf = importlib.import_module("traxla.experimental.jax2tf")
    mgpu = importlib.import_module("traxla.experimental.mosaic.gpu")
    uses = [lambda: jax2tf.convert(abs), lambda: jax2tf.PolyShape("b"),
            lambda: mgpu.WGMMA_LAYOUT.vector_length, lambda: mgpu.dialect.AsyncLoadOp,
            lambda: mgpu.as_gpu_kernel(abs, (1, 1, 1), (128, 1, 1), (), (), ())]
    for use in uses:
        with pytest.raises(NotImplementedError, match="not supported by traxla: it needs "
                                                      "(jax2tf|Mosaic GPU)"):
            use()
    assert isinstance(jax2tf.PolyShape, type) and callable(mgpu.as_gpu_kernel)
    assert repr(mgpu.WGMMA_LAYOUT).startswith("<traxla.experimental.mosaic.gpu.WGMMA_LAYOUT")


def test_default_registry_as_jax():
    import collections

    import jax

    import traxla
    tree = {"b": (1, [2.0, None]), "a": collections.OrderedDict(x=3)}
    for name in ("flatten", "flatten_with_path", "flatten_one_level",
                 "flatten_one_level_with_keys"):
        ours = getattr(traxla.tree_util.default_registry, name)(tree)
        theirs = getattr(jax.tree_util.default_registry, name)(tree)
        assert repr(ours) == repr(theirs), name
    assert traxla.tree_util.default_registry.flatten_one_level(1.0) is None

    class Node:
        def __init__(self, a):
            self.a = a
    traxla.tree_util.default_registry.register_node(Node, lambda n: ((n.a,), None),
                                                    lambda _, c: Node(*c))
    assert traxla.tree_util.tree_leaves([Node(5)]) == [5]
