"""The package's layering holds: no import runs upward across the layers of
``tools/layers.py``, no import circle is larger than ``MAX_CIRCLE`` modules, no module of
the package is over 800 lines, and every module belongs to a layer."""
import functools
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import layers  # noqa: E402

PKG = os.path.join(ROOT, "traxla")


@pytest.fixture
def shared_graph(monkeypatch):
    """The package's import graph (``layers.imports``: parsing every module, seconds) made
    once per process for the tests of the real package; other roots are parsed as asked."""
    monkeypatch.setattr(layers, "imports",
                        lambda root: _package_graph() if root == PKG else _IMPORTS(root))


_IMPORTS = layers.imports


@functools.lru_cache(maxsize=None)
def _package_graph():
    return _IMPORTS(PKG)


def test_every_module_has_a_layer():
    for module in layers.modules(PKG):
        layers.layer_of(module)  # raises KeyError naming the module


def test_no_upward_imports(shared_graph):
    upward = layers.upward_imports(PKG)
    assert not upward, "imports that run upward across layers:\n" + "\n".join(upward)


def test_largest_import_circle(shared_graph):
    circles = layers.circles(PKG)
    largest = circles[0] if circles else []
    assert len(largest) <= layers.MAX_CIRCLE, (
        f"an import circle of {len(largest)} modules: {', '.join(largest)}")


def test_modules_under_800_lines():
    long = []
    for module, path in layers.modules(PKG).items():
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > 800:
            long.append(f"{module}: {n} lines")
    assert not long, "modules over 800 lines: " + ", ".join(long)


def test_checker_catches_an_upward_import(tmp_path):
    # the check itself can fail: a base-layer module importing the runtime is reported
    pkg = tmp_path / "traxla"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "runtime" / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from traxla.runtime import x\n")
    ups = layers.upward_imports(str(pkg))
    assert len(ups) == 1 and "traxla.errors (base) imports traxla.runtime (runtime)" in ups[0]


def test_checker_measures_circles(tmp_path):
    pkg = tmp_path / "traxla"
    (pkg / "lax").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "lax" / "__init__.py").write_text("")
    (pkg / "lax" / "a.py").write_text("from traxla.lax import b\n")
    (pkg / "lax" / "b.py").write_text("def g():\n    from traxla.lax.a import x\n")
    assert layers.circles(str(pkg)) == [["traxla.lax.a", "traxla.lax.b"]]


@pytest.mark.parametrize("name", ["traxla.autodiff.rules.elementwise", "traxla.lax.linalg",
                                  "traxla.numpy._ufuncs", "traxla.primitives.shapes"])
def test_layer_names(name):
    expected = {"traxla.autodiff.rules.elementwise": "rules", "traxla.lax.linalg": "lax",
                "traxla.numpy._ufuncs": "numpy", "traxla.primitives.shapes": "primitives"}
    assert layers.layer_of(name) == expected[name]


# Outside the adapter package, jaxlib is imported only for its MLIR bindings (what lowering
# builds StableHLO with) and by these namespaces, which re-export jaxlib modules as JAX's do.
JAXLIB_BINDINGS = ("jaxlib.mlir", "jaxlib.mosaic")
JAXLIB_REEXPORTS = {"traxla.extend.backend", "traxla.extend.mlir", "traxla.extend.sharding",
                    "traxla.extend.xla"}


def _jaxlib_imports(path):
    import ast
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if "jaxlib" not in text:  # (an import of jaxlib names it: no need to parse the module)
        return
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "jaxlib":
                yield from (f"jaxlib.{a.name}" for a in node.names)
            else:
                yield node.module


def test_jaxlib_runtime_contact_stays_in_the_adapter_package():
    """A jaxlib upgrade is a change to ``traxla/runtime/xla_adapter/`` alone: no other
    module imports jaxlib's PJRT surface (``_jax``, ``xla_client``, ...)."""
    outside = []
    for module, path in layers.modules(PKG).items():
        if module.startswith("traxla.runtime.xla_adapter") or module in JAXLIB_REEXPORTS:
            continue
        for name in _jaxlib_imports(path):
            if (name == "jaxlib" or name.startswith("jaxlib.")) and not name.startswith(
                    JAXLIB_BINDINGS):
                outside.append(f"{module} imports {name}")
    assert not outside, "jaxlib touched outside runtime/xla_adapter/:\n" + "\n".join(outside)


def test_adapter_and_jit_modules_under_600_lines():
    long = []
    for module, path in layers.modules(PKG).items():
        if module.startswith(("traxla.runtime.xla_adapter", "traxla.api.jit")):
            with open(path, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > 600:
                long.append(f"{module}: {n} lines")
    assert not long, "modules over 600 lines: " + ", ".join(long)
