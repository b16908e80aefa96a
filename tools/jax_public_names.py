"""Writes traxla/jax_public_names.json: JAX's public names per namespace, the reference of
``python -m traxla coverage --api``. It imports jax, so it lives outside the package (which
never imports jax); tests/test_numpy_rest.py checks the file against the installed JAX.

    python tools/jax_public_names.py
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from traxla.cli.api_coverage import NAMESPACES, SNAPSHOT  # noqa: E402


def public_names(module) -> list:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def snapshot() -> dict:
    import jax
    import jax.scipy.stats
    spaces = list(NAMESPACES) + [
        (f"scipy.stats.{n}", f"jax.scipy.stats.{n}", f"traxla.scipy.stats.{n}")
        for n in public_names(jax.scipy.stats)
        if isinstance(getattr(jax.scipy.stats, n), types.ModuleType)]
    out = {"jax_version": jax.__version__, "namespaces": {}}
    # Import every namespace before listing any: an imported submodule becomes an attribute
    # of its package, so listing as we go would make a package's names depend on the order.
    modules = {}
    for label, jax_name, traxla_name in spaces:
        try:
            modules[label] = importlib.import_module(jax_name)
        except ImportError:
            continue
    for label, jax_name, traxla_name in spaces:
        if label in modules:
            out["namespaces"][label] = {"traxla": traxla_name,
                                        "names": public_names(modules[label])}
    return out


if __name__ == "__main__":
    with open(SNAPSHOT, "w") as f:
        json.dump(snapshot(), f, indent=0)
        f.write("\n")
    print(f"wrote {SNAPSHOT}")
