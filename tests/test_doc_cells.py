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
    assert (doc_cells.normalize("<class 'jaxlib._jax.ArrayImpl'>")
            == doc_cells.normalize("<class 'traxla.runtime.array.ArrayImpl'>"))
    assert (doc_cells.normalize("<jax._src.sharding_impls.set_mesh object at 0x7f2ca81d72e0>")
            == "<set_mesh object at <#1>>"
            == doc_cells.normalize("<traxla.sharding.set_mesh object at 0x7fe48fb98650>"))


_SYNTHETIC_PAGE = """\
# A page

```{code-cell} ipython3
:tags: [raises-exception]

1 / 0
```

```{code-cell}
---
tags: [skip-execution, hide-input]
---
never()
```

```{code-cell} ipython3
!pip install something
%timeit -n 3 x = 1
print(x)
```

````{code-cell}
%%bash
echo cell magic
````
"""


def test_reading_tags_and_ipython_syntax(tmp_path):
    doc_cells = _doc_cells()
    page = tmp_path / "page.md"
    page.write_text(_SYNTHETIC_PAGE)
    cells = doc_cells.read_cells(str(page))
    assert [c.tags for c in cells] == [["raises-exception"], ["skip-execution", "hide-input"],
                                       [], []]
    assert [c.skip for c in cells] == [None, "skip-execution", None, "cell magic"]
    assert cells[0].source.strip() == "1 / 0"
    assert cells[2].source.split("\n")[1:] == ["x = 1", "print(x)"]
    namespace = {}
    records = [doc_cells.run_cell(c, namespace) for c in (cells[0], cells[2])]
    assert records[0]["exception"] == "ZeroDivisionError"
    assert records[1]["stdout"] == "1\n" and records[1]["exception"] is None
    # a cell JAX marks as raising counts as the same when both raise the same class
    assert doc_cells.compare(cells[0], records[0], dict(records[0], message="other"))[0]
    assert not doc_cells.compare(cells[2], records[1], dict(records[1], stdout="2\n"))[0]
    # a cell JAX's run never reached (a timeout) is not counted, even if traxla's missed it too
    crash = {"index": 2, "stdout": "", "repr": None, "exception": "<crash>",
             "message": "timed out after 600 s"}
    assert doc_cells.compare(cells[2], crash, crash)[0] is None
    assert doc_cells.compare(cells[2], crash, records[1])[0] is None


def _page_against_stored_jax(name, n_cells, timeout):
    """Runs tests/data/NAME.md under traxla and compares every cell with JAX's records of
    the page, stored once (JAX is pinned; the suite's time is spent on traxla's run):
    regenerate with ``python tools/doc_cells.py tests/data/NAME.md --write-golden
    tests/data/NAME.jax.json`` when the pinned JAX changes. Returns the report."""
    doc_cells = _doc_cells()
    page = os.path.join(DATA, f"{name}.md")
    cells, want, got = doc_cells.check_page(page, os.path.join(DATA, f"{name}.jax.json"),
                                            timeout=timeout)
    out = io.StringIO()
    same, counted = doc_cells.report(page, cells, want, got, verbose=True, stream=out)
    assert counted == len(cells) == n_cells
    assert same == counted, out.getvalue()
    return out.getvalue()


def test_array_refs_page_runs_cell_for_cell_as_under_jax():
    report = _page_against_stored_jax("array_refs", 19, timeout=300)
    assert report.rstrip().endswith("19 of 19 cells behave as under JAX")


def test_shard_map_page_runs_cell_for_cell_as_under_jax():
    """The sharding tutorial (8 CPU devices, set by its first cell): eager shard_map bodies
    printing every device's block, varying-manual-axes types, JAX's out_specs and in_specs
    checks, and its data-, tensor-, FSDP and pipeline-parallel training examples."""
    _page_against_stored_jax("shard_map", 69, timeout=600)


def test_jax_ref_api_page_names_exist():
    module, names = _doc_cells().autosummary_names(os.path.join(DATA, "jax.ref.rst"))
    assert module == "jax.ref" and len(names) == 8
    missing = [n for n in names if not hasattr(traxla.ref, n)]
    assert not missing, missing


def test_runs_seed_numpy_and_python_random_alike(tmp_path):
    """A page drawing unseeded random numbers (tracing.md's ``np.random.randn``) gives
    both runs the same inputs."""
    doc_cells = _doc_cells()
    page = tmp_path / "page.md"
    page.write_text("```{code-cell}\nimport random\nimport numpy as np\n"
                    "print(np.random.randn(3), random.random())\n```\n")
    outs = []
    for k in range(2):
        out = tmp_path / f"out{k}.jsonl"
        doc_cells.child_main("jax", str(page), str(out))  # (imports jax, then seeds)
        outs.append(out.read_text())
        import numpy as np
        np.random.randn(5)  # moves the global generator between the runs
    assert outs[0] == outs[1] and "[" in outs[0]


def test_finding_every_page_with_code_cells(tmp_path):
    """``--all DOCS_DIR``: MyST pages with code cells, notebooks without a ``.md`` twin (their
    code cells, tags and IPython syntax), and the pages ``conf.py`` does not execute."""
    doc_cells = _doc_cells()
    (tmp_path / "a.md").write_text("```{code-cell}\nx = 1\n```\n")
    (tmp_path / "plain.md").write_text("```python\nnot run\n```\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "b.md").write_text("```{code-cell}\ny = 2\n```\n")
    (sub / "b.ipynb").write_text('{"cells": [{"cell_type": "code", "source": ["y = 2"]}]}')
    (sub / "c.ipynb").write_text(
        '{"cells": [{"cell_type": "markdown", "source": "# c"},'
        ' {"cell_type": "code", "metadata": {"tags": ["raises-exception"]},'
        ' "source": ["!pip install x\\n", "1 / 0"]}]}')
    (tmp_path / "conf.py").write_text("nb_execution_excludepatterns = ['sub/b.*']\n")
    pages = doc_cells.find_pages(str(tmp_path))
    assert [p for p, _ in pages] == ["a.md", "sub/b.md", "sub/c.ipynb"]
    assert [n is None for _, n in pages] == [True, False, True]
    cells = doc_cells.read_cells(str(sub / "c.ipynb"))
    assert len(cells) == 1 and cells[0].line == 2 and cells[0].tags == ["raises-exception"]
    assert doc_cells.run_cell(cells[0], {})["exception"] == "ZeroDivisionError"
    results = [("a.md", None, 1, 1, 0, []), ("sub/b.md", "not executed", 0, 1, 1, [])]
    text = doc_cells.table(results)
    assert "all 2 pages: 1 of 2 cells behave as under JAX (50.0%)" in text
    assert "the 1 pages JAX's docs build executes: 1 of 1 cells" in text
