"""Writes tests/data/jax_module_surface.json: every public module of the installed JAX
(every module file under the ``jax`` package, leaving out ``_src`` and ``tests``), and for
each one that imports with JAX alone its public names (``dir()`` without ``_`` names) and
their kind: ``module``, ``class``, ``function`` (any other callable) or ``constant``.
tests/test_module_surface.py checks traxla, under the ``jax`` drop-in, against it.

    python tools/jax_module_surface.py            # writes the snapshot
    python tools/jax_module_surface.py --check    # compares the module list with the file

Modules are imported one by one in this process, each inside ``try``: one that fails (it
needs tensorflow, tensorstore, xprof...) is recorded with the error and does not stop the
walk. Every module is imported before any is listed, since importing a submodule adds an
attribute to its package. absl-py is not a JAX dependency, but JAX's Mosaic GPU, roofline,
source_mapper and test utilities import it; with it installed (``PYTHONPATH`` to a
``pip install --target`` folder is enough) those modules are recorded too.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNAPSHOT = os.path.join(ROOT, "tests", "data", "jax_module_surface.json")
LEFT_OUT_PARTS = ("_src", "tests")


def module_names(package_dir: str, package: str = "jax") -> list:
    """Every module file under ``package_dir`` as a dotted name, without ``_src``/``tests``."""
    out = []
    for dirpath, dirnames, filenames in os.walk(package_dir):
        rel = os.path.relpath(dirpath, package_dir)
        parts = [] if rel == "." else rel.split(os.sep)
        dirnames[:] = sorted(d for d in dirnames if d not in LEFT_OUT_PARTS
                             and os.path.exists(os.path.join(dirpath, d, "__init__.py")))
        if parts and not os.path.exists(os.path.join(dirpath, "__init__.py")):
            continue
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            stem = f[:-3]
            dotted = [package] + parts + ([] if stem == "__init__" else [stem])
            out.append(".".join(dotted))
    return sorted(out)


def kind(value) -> str:
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    return "constant"


def public_names(module) -> dict:
    out = {}
    for n in dir(module):
        if n.startswith("_"):
            continue
        try:
            out[n] = kind(getattr(module, n))
        except Exception:  # a lazy attribute that fails: still a name of the module
            out[n] = "constant"
    return out


def snapshot() -> dict:
    import jax
    names = module_names(os.path.dirname(jax.__file__))
    modules, errors = {}, {}
    for name in names:
        try:
            modules[name] = importlib.import_module(name)
        except BaseException as e:  # noqa: BLE001 -- SystemExit from a script module too
            errors[name] = f"{type(e).__name__}: {e}"[:200]
    out = {"jax_version": jax.__version__, "modules": {}}
    for name in names:
        if name in modules:
            out["modules"][name] = {"names": public_names(modules[name])}
        else:
            out["modules"][name] = {"import_error": errors[name]}
    return out


def check() -> int:
    import jax
    with open(SNAPSHOT) as f:
        stored = json.load(f)
    now = module_names(os.path.dirname(jax.__file__))
    same = stored["jax_version"] == jax.__version__ and sorted(stored["modules"]) == now
    print("snapshot matches the installed JAX" if same else "snapshot is stale: regenerate")
    return 0 if same else 1


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        sys.exit(check())
    snap = snapshot()
    with open(SNAPSHOT, "w") as f:
        json.dump(snap, f, indent=0, sort_keys=True)
        f.write("\n")
    mods = snap["modules"]
    imported = [m for m in mods.values() if "names" in m]
    print(f"wrote {SNAPSHOT}: {len(mods)} modules, {len(imported)} import, "
          f"{sum(len(m['names']) for m in imported)} names")
