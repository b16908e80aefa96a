"""JAX 0.10.2's array-ref documentation runs under traxla as under JAX: every code cell of
``docs/array_refs.md`` (a copy in tests/data, see NOTICE.md) prints, returns and raises as
it does with JAX (``tools/doc_cells.py`` runs the page in two child processes), and every
name ``docs/jax.ref.rst`` documents exists in ``traxla.ref``."""
from __future__ import annotations

import importlib.util
import io
import os

import traxla

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def _doc_cells():
    spec = importlib.util.spec_from_file_location(
        "doc_cells", os.path.join(HERE, os.pardir, "tools", "doc_cells.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_reading_cells_of_a_myst_page():
    doc_cells = _doc_cells()
    cells = doc_cells.read_cells(os.path.join(DATA, "array_refs.md"))
    assert len(cells) == 19
    assert cells[0].source.startswith("import jax\nimport jax.numpy as jnp")
    assert all(c.skip is None for c in cells)
    # the comparison's normalization: addresses numbered by first appearance, class paths cut
    assert doc_cells.normalize("123456789012 x 0x7f00aa00 123456789012") == "<#1> x <#2> <#1>"
    assert doc_cells.normalize("<class 'jax._src.core.Tracer'>") == "<class 'Tracer'>"


def test_array_refs_page_runs_cell_for_cell_as_under_jax():
    doc_cells = _doc_cells()
    page = os.path.join(DATA, "array_refs.md")
    cells, want, got = doc_cells.check_page(page, timeout=300)
    out = io.StringIO()
    same, counted = doc_cells.report(page, cells, want, got, verbose=True, stream=out)
    assert counted == len(cells) == 19
    assert same == counted, out.getvalue()
    assert out.getvalue().rstrip().endswith("19 of 19 cells behave as under JAX")


def test_jax_ref_api_page_names_exist():
    module, names = _doc_cells().autosummary_names(os.path.join(DATA, "jax.ref.rst"))
    assert module == "jax.ref" and len(names) == 8
    missing = [n for n in names if not hasattr(traxla.ref, n)]
    assert not missing, missing
