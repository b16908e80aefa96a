"""Resolves ``jax.*`` names, and imports packages, in this process (run by
tools/ecosystem_census.py with a census venv's Python: plainly for JAX, under
``python -m traxla.as_jax`` for traxla).

    python tools/census_resolve.py IN.json OUT.json

IN.json: ``{"names": ["jax.numpy.linalg.norm", ...], "modules": ["optax", ...]}``.
OUT.json: ``{"names": {name: null | "ErrorType: message"}, "modules": {...}}``, the same.
A name resolves when the longest importable module prefix imports and ``getattr`` finds the
rest on it.
"""
from __future__ import annotations

import importlib
import json
import os
import sys
import warnings


def _err(e: BaseException) -> str:
    msg = str(e).splitlines()[0] if str(e) else ""
    return f"{type(e).__name__}: {msg}"[:300]


def resolve(name: str):
    parts = name.split(".")
    last = None
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        if i < len(parts) and modname in sys.modules:
            mod = sys.modules[modname]
        else:
            try:
                mod = importlib.import_module(modname)
            except ModuleNotFoundError as e:
                # Not a module by this name: try a shorter prefix, unless the module exists
                # and failed importing something else.
                if e.name is not None and not (modname == e.name
                                               or modname.startswith(e.name + ".")):
                    return _err(e)
                last = e
                continue
            except Exception as e:  # noqa: BLE001 - an import that fails is the finding
                return _err(e)
        obj = mod
        for j, attr in enumerate(parts[i:]):
            try:
                obj = getattr(obj, attr)
            except Exception as e:  # noqa: BLE001
                where = ".".join(parts[:i + j])
                return f"AttributeError: '{where}' has no attribute '{attr}'" \
                    if isinstance(e, AttributeError) else _err(e)
        return None
    return _err(last) if last else f"ModuleNotFoundError: {name}"


def main():
    with open(sys.argv[1]) as f:
        req = json.load(f)
    out = {"names": {}, "modules": {}}
    warnings.simplefilter("ignore")
    for mod in req.get("modules", []):
        try:
            importlib.import_module(mod)
            out["modules"][mod] = None
        except BaseException as e:  # noqa: BLE001 - SystemExit from a library counts too
            out["modules"][mod] = _err(e)
    for name in req.get("names", []):
        try:
            out["names"][name] = resolve(name)
        except BaseException as e:  # noqa: BLE001
            out["names"][name] = _err(e)
    with open(sys.argv[2], "w") as f:
        json.dump(out, f)
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown (some libraries' atexit hooks are slow)


if __name__ == "__main__":
    main()
