"""Run by tests/test_module_surface.py (``python this.py SNAPSHOT``, traxla's own ``jax``
drop-in installed here): imports every module of the snapshot under the drop-in, then
checks each recorded name and its kind. Prints JSON: ``{"modules": {name: error},
"names": {module: [name, ...]}}`` listing what is missing (a kind mismatch counts as
missing, noted ``name:kind-found``), and ``"private": {path: error}``."""
import importlib
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))
import traxla.as_jax  # noqa: E402

traxla.as_jax.install()
from jax_module_surface import kind  # noqa: E402  (tools/: never imports jax itself)

with open(sys.argv[1]) as f:
    stored = json.load(f)["modules"]
imported, missing_modules = {}, {}
for name in sorted(stored):  # import all before looking: a submodule is its package's name
    try:
        imported[name] = importlib.import_module(name)
    except BaseException as e:  # noqa: BLE001 -- the error is the result
        missing_modules[name] = f"{type(e).__name__}: {e}"[:300]
missing_names = {}
for name, module in imported.items():
    lost = []
    for attr, want in stored[name].get("names", {}).items():
        try:
            value = getattr(module, attr)
        except AttributeError:
            lost.append(attr)
            continue
        except Exception:  # noqa: BLE001 -- present, but its lazy value fails
            value = None
            got = "constant"
        else:
            got = kind(value)
        if got != want:
            lost.append(f"{attr}:{got}")
    if lost:
        missing_names[name] = sorted(lost)
private = {}
for name in sys.argv[2:]:  # further paths (JAX-private ones libraries import) to import
    try:
        importlib.import_module(name)
    except BaseException as e:  # noqa: BLE001
        private[name] = f"{type(e).__name__}: {e}"[:300]
print(json.dumps({"modules": missing_modules, "names": missing_names, "private": private},
                 sort_keys=True))
