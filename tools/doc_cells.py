"""Runs the code cells of a JAX documentation page (a MyST notebook, ``.md``) twice, once
with JAX and once with traxla standing in for ``jax``, and reports per cell whether the two
behave the same: same stdout, same repr of a last expression, same exception class.

    python tools/doc_cells.py docs/array_refs.md [more pages...] [--json OUT] [-v]
    python tools/doc_cells.py page.md --golden G.json     # compare traxla with stored JAX runs
    python tools/doc_cells.py page.md --write-golden G.json

Each run happens in a child process (``--child jax|traxla``) that executes the cells in
order in one namespace, as a notebook kernel does, and writes one JSON line per cell as it
goes, so that a crash or a timeout still reports the cells run before it. For traxla, an
import hook maps ``jax`` and every ``jax.X`` to ``traxla`` and ``traxla.X`` (``import
jax.numpy as jnp``, ``from jax.lax import scan``, ``from jax import Array``).

A cell JAX's own run does not reach (it timed out or crashed before it) is not counted.
What counts as the same (see ``compare``): the outputs after ``normalize`` (memory addresses
and other long integers that vary from run to run become numbered placeholders, so "the
same address printed twice" still has to hold), and the exception class name. A cell JAX
tags ``raises-exception`` is the same when both raise the same class. Cells tagged
``skip-execution`` and cell magics (``%%...``) are skipped; line magics (``%timeit x``) run
their statement once; shell escapes (``!pip ...``) are dropped. Both runs seed NumPy's and
Python's global random generators alike, so unseeded draws give both the same inputs.

The summary line reads "N of M cells behave as under JAX" (skipped cells not counted).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# -- reading a page ----------------------------------------------------------------------

class Cell:
    """One code cell: its source as run, its tags, and why it is skipped (if it is)."""

    def __init__(self, index, line, source, tags, skip=None):
        self.index, self.line, self.source, self.tags, self.skip = index, line, source, tags, skip

    def to_json(self):
        return {"index": self.index, "line": self.line, "tags": self.tags, "skip": self.skip}


_FENCE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}(.*)$")


def _cell_metadata(lines, k):
    """``(tags, first source line)`` for the metadata of a cell whose body starts at ``k``:
    ``:key: value`` lines or a ``---``-delimited YAML block."""
    tags = []

    def take(key, value):
        if key.strip() == "tags":
            tags.extend(t.strip().strip("'\"") for t in value.strip().strip("[]").split(",")
                        if t.strip())
    if k < len(lines) and lines[k].strip() == "---":
        end = k + 1
        while end < len(lines) and lines[end].strip() != "---":
            key, _, value = lines[end].partition(":")
            take(key, value)
            end += 1
        return tags, end + 1
    while k < len(lines) and re.match(r"^:[\w-]+:", lines[k]):
        _, key, value = lines[k].split(":", 2)
        take(key, value)
        k += 1
    return tags, k


def _translate_magics(source):
    """``(python source, skip reason or None)`` for a cell that may use IPython syntax."""
    if source.lstrip().startswith("%%"):
        return source, "cell magic"
    out = []
    for line in source.split("\n"):
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith("!"):
            out.append(indent + "pass  # shell escape dropped")
        elif stripped.startswith("%"):
            magic, _, rest = stripped.partition(" ")
            if magic in ("%time", "%timeit", "%prun") and rest.strip():
                # the statement once, without the magic's own options
                out.append(indent + re.sub(r"^(-\S+\s+(\d+\s+)?)*", "", rest.strip()))
            else:
                out.append(indent + "pass  # line magic dropped")
        else:
            out.append(line)
    return "\n".join(out), None


def _closes(line, fence):
    """Whether ``line`` closes a code fence opened by ``fence`` (as long or longer)."""
    stripped = line.strip()
    return (line.startswith(fence) and len(stripped) >= len(fence)
            and stripped == fence[0] * len(stripped))


def read_cells(path):
    """The code cells of a page, in order: a MyST notebook (``.md``) or a Jupyter notebook
    (``.ipynb``, where a cell's ``line`` is its position among the notebook's cells)."""
    if path.endswith(".ipynb"):
        return _read_notebook_cells(path)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    cells, k = [], 0
    while k < len(lines):
        m = _FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        fence, start = m.group(1), k + 1
        tags, body = _cell_metadata(lines, k + 1)
        end = body
        while end < len(lines) and not _closes(lines[end], fence):
            end += 1
        source, skip = _translate_magics("\n".join(lines[body:end]))
        if "skip-execution" in tags:
            skip = "skip-execution"
        cells.append(Cell(len(cells), start, source, tags, skip))
        k = end + 1
    return cells


def _read_notebook_cells(path):
    with open(path, encoding="utf-8") as f:
        notebook = json.load(f)
    cells = []
    for position, nb_cell in enumerate(notebook.get("cells", [])):
        if nb_cell.get("cell_type") != "code":
            continue
        source = nb_cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        tags = list(nb_cell.get("metadata", {}).get("tags", []))
        source, skip = _translate_magics(source)
        if "skip-execution" in tags:
            skip = "skip-execution"
        cells.append(Cell(len(cells), position + 1, source, tags, skip))
    return cells


def _excluded_by_conf(docs_dir):
    """The glob patterns of ``nb_execution_excludepatterns`` in the docs' ``conf.py``: the
    pages JAX's own documentation build does not execute (accelerators, extra packages)."""
    conf = os.path.join(docs_dir, "conf.py")
    if not os.path.exists(conf):
        return []
    with open(conf, encoding="utf-8") as f:
        tree = ast.parse(f.read(), conf)
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "nb_execution_excludepatterns"):
            return list(ast.literal_eval(node.value))
    return []


def find_pages(docs_dir):
    """``[(page, note)]`` under ``docs_dir``, paths relative to it: every ``.md`` page with a
    ``{code-cell}`` and every ``.ipynb`` notebook with a code cell that has no ``.md`` twin
    (JAX pairs most notebooks with jupytext: the twin holds the same cells). ``note`` says
    why JAX's own documentation build does not execute the page (its ``conf.py``'s
    ``nb_execution_excludepatterns``: accelerators, extra packages, slow), else ``None``."""
    import fnmatch
    patterns = _excluded_by_conf(docs_dir)
    pages = []
    for folder, dirs, files in os.walk(docs_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        for name in sorted(files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, docs_dir).replace(os.sep, "/")
            if name.endswith(".md"):
                with open(path, encoding="utf-8") as f:
                    if not _FENCE_ANYWHERE.search(f.read()):
                        continue
            elif name.endswith(".ipynb"):
                if os.path.exists(path[:-len(".ipynb")] + ".md") or not _read_notebook_cells(path):
                    continue
            else:
                continue
            hit = next((p for p in patterns if fnmatch.fnmatch(rel, p)), None)
            pages.append((rel, f"not executed by JAX's docs build ({hit})" if hit else None))
    return pages


_FENCE_ANYWHERE = re.compile(r"^(`{3,}|~{3,})\{code-cell\}", re.M)


def autosummary_names(path):
    """The names an ``.rst`` page lists under ``.. autosummary::`` (its API table), with the
    module of its ``.. automodule::``: ``(module, [names])``."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    module, names, inside = None, [], False
    for line in lines:
        m = re.match(r"^\.\. (?:auto|current)module:: *(\S+)", line)
        if m:
            module = m.group(1)
        if line.startswith(".. autosummary::"):
            inside = True
            continue
        if inside:
            stripped = line.strip()
            if not stripped or stripped.startswith(":"):
                if not stripped and names:
                    inside = False
                continue
            if not line.startswith((" ", "\t")):
                inside = False
                continue
            names.append(stripped)
    return module, names


# -- running the cells (in the child process) --------------------------------------------

class _TraxlaForJax(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import jax.X`` gives ``traxla.X``: the same module object under both names."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        target_name = "traxla" + fullname[3:]
        try:
            module = importlib.import_module(target_name)
        except ImportError:
            return None
        spec = importlib.util.spec_from_loader(fullname, self)
        spec._traxla_module = module
        return spec

    def create_module(self, spec):
        return spec._traxla_module

    def exec_module(self, module):
        pass


def install_traxla_as_jax():
    sys.path.insert(0, ROOT)
    for name in [n for n in sys.modules if n == "jax" or n.startswith("jax.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _TraxlaForJax())
    import jax  # noqa: F401  (through the hook: traxla)


def _split_last_expression(source, filename):
    """``(code of all statements but a trailing expression, code of that expression)``."""
    tree = ast.parse(source, filename)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
        return compile(tree, filename, "exec"), compile(last, filename, "eval")
    return compile(tree, filename, "exec"), None


def run_cell(cell, namespace):
    """Runs one cell; the record of what it did (``stdout``, ``repr``, ``exception``)."""
    record = {"index": cell.index, "stdout": "", "repr": None, "exception": None,
              "message": None}
    buffer = io.StringIO()
    filename = f"<cell {cell.index}>"
    try:
        with contextlib.redirect_stdout(buffer):
            body, last = _split_last_expression(cell.source, filename)
            exec(body, namespace)  # noqa: S102  (running the page's cells is the purpose)
            if last is not None:
                value = eval(last, namespace)  # noqa: S307
                if value is not None:
                    record["repr"] = repr(value)
    except BaseException as e:  # noqa: BLE001  (a cell's exception is part of its behaviour)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        record["exception"] = type(e).__name__
        record["message"] = str(e)
        record["traceback"] = "".join(traceback.format_exception(type(e), e, e.__traceback__,
                                                                 limit=-4))
    record["stdout"] = buffer.getvalue()
    return record


def child_main(library, page, out):
    if library == "traxla":
        install_traxla_as_jax()
    else:
        import jax  # noqa: F401  (importing JAX draws from NumPy's global generator)
    # the same seeds in both runs, after the import: a page drawing unseeded NumPy or
    # Python random numbers (``np.random.randn(3)``) gives both libraries the same inputs
    import random
    import numpy as np
    random.seed(0)
    np.random.seed(0)
    namespace = {"__name__": "__main__"}
    with open(out, "w", encoding="utf-8") as f:
        for cell in read_cells(page):
            record = {"index": cell.index, "skipped": cell.skip} if cell.skip else \
                run_cell(cell, namespace)
            f.write(json.dumps(record) + "\n")
            f.flush()


def run_page(library, page, timeout=600):
    """The per-cell records of one run of ``page`` with ``library`` ('jax' or 'traxla'); a
    cell the child did not reach (it crashed or timed out) gets ``{"exception": "<crash>"}``
    with the child's last words."""
    import tempfile
    cells = read_cells(page)
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl", delete=False) as tmp:
        out = tmp.name
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", library,
                               page, "--out", out], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=os.path.dirname(os.path.abspath(page)))
        last_words = proc.stderr[-2000:] if proc.returncode else ""
    except subprocess.TimeoutExpired:
        last_words = f"timed out after {timeout} s"
    with open(out, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    os.unlink(out)
    for cell in cells[len(records):]:
        records.append({"index": cell.index, "stdout": "", "repr": None,
                        "exception": "<crash>", "message": last_words})
    return records


# -- comparing -----------------------------------------------------------------------------

_VOLATILE = re.compile(r"0x[0-9a-fA-F]{6,}|(?<![\w.])\d{9,}(?![\w.])")


# a class of either library (JAX's include jaxlib's) printed with its module path: the
# paths are internal
_CLASS_PATH = re.compile(r"<class '(?:jaxlib|jax|traxla)(?:\.\w+)*\.(\w+)'>")
# the default repr of such an object: ``<jax._src.sharding_impls.set_mesh object at 0x...>``
_OBJECT_PATH = re.compile(r"<(?:jaxlib|jax|traxla)(?:\.\w+)*\.(\w+) object at ")


def normalize(text):
    """``text`` with memory addresses (``0x7f...``) and long integers (buffer pointers, ids)
    replaced by ``<#1>``, ``<#2>``, ... numbered by first appearance, and the classes of
    either library named without their module path (``<class 'DynamicJaxprTracer'>``,
    ``<set_mesh object at <#1>>``)."""
    if not text:
        return text
    seen = {}
    text = _CLASS_PATH.sub(r"<class '\1'>", text)
    text = _OBJECT_PATH.sub(r"<\1 object at ", text)
    return _VOLATILE.sub(lambda m: "<#%d>" % seen.setdefault(m.group(0), len(seen) + 1), text)


def compare(cell, want, got):
    """``(same, why)`` for one cell's JAX record ``want`` and traxla record ``got``."""
    if want.get("skipped") or got.get("skipped"):
        return None, "skipped: " + str(want.get("skipped") or got.get("skipped"))
    if want["exception"] == "<crash>":  # JAX's run timed out or died before this cell
        return None, "not reached under JAX: " + (want.get("message") or "")[-200:]
    if want["exception"] != got["exception"]:
        return False, (f"JAX {'raised ' + want['exception'] if want['exception'] else 'ran'}, "
                       f"traxla {'raised ' + got['exception'] if got['exception'] else 'ran'}"
                       + (f": {got['message']}" if got["exception"] else ""))
    if want["exception"] and "raises-exception" in cell.tags:
        return True, f"both raise {want['exception']} (as the page marks it)"
    for key in ("stdout", "repr"):
        if normalize(want[key]) != normalize(got[key]):
            return False, f"{key} differs"
    return True, "same"


def _diff(want, got):
    import difflib
    return "\n".join(difflib.unified_diff((want or "").split("\n"), (got or "").split("\n"),
                                          "jax", "traxla", lineterm="", n=1))


def report(page, cells, want, got, verbose=False, stream=sys.stdout):
    """Prints the per-cell verdicts and the summary line; returns ``(same, counted)``."""
    same = counted = 0
    print(f"== {page}", file=stream)
    for cell, w, g in zip(cells, want, got):
        ok, why = compare(cell, w, g)
        if ok is None:
            print(f"  cell {cell.index:3d} (line {cell.line}): {why}", file=stream)
            continue
        counted += 1
        same += ok
        print(f"  cell {cell.index:3d} (line {cell.line}): {'same' if ok else 'DIFFERENT'}"
              f"{'' if why == 'same' else ' - ' + why}", file=stream)
        if verbose and not ok:
            for key in ("stdout", "repr", "message"):
                if normalize(w.get(key)) != normalize(g.get(key)):
                    print("    " + _diff(w.get(key), g.get(key)).replace("\n", "\n    "),
                          file=stream)
    print(f"{same} of {counted} cells behave as under JAX", file=stream)
    return same, counted


def check_page(page, golden=None, timeout=600):
    """``(cells, jax records, traxla records)`` for one page; JAX's from ``golden`` (a file
    written by ``--write-golden``) when given, else run live."""
    cells = read_cells(page)
    if golden is not None:
        with open(golden, encoding="utf-8") as f:
            want = json.load(f)["cells"]
    else:
        want = run_page("jax", page, timeout)
    return cells, want, run_page("traxla", page, timeout)


def _golden_path(golden_dir, page):
    return os.path.join(golden_dir, page.replace("/", "__").rsplit(".", 1)[0] + ".jax.json")


def _load_or_run_jax(docs_dir, page, golden_dir, timeout):
    """JAX's records of ``page``: read from ``golden_dir`` when stored there, else run (and
    stored when ``golden_dir`` is given)."""
    path = _golden_path(golden_dir, page) if golden_dir else None
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)["cells"]
    records = run_page("jax", os.path.join(docs_dir, page), timeout)
    if path:
        os.makedirs(golden_dir, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"page": page, "cells": records}, f, indent=1)
            f.write("\n")
    return records


def run_all(docs_dir, golden_dir=None, jobs=2, timeout=600, only=None, verbose=False,
            stream=sys.stdout):
    """Runs every page ``find_pages`` finds under ``docs_dir`` (``jobs`` pages at a time),
    prints each page's per-cell report to ``stream`` and returns
    ``[(page, note, same, counted, skipped, cells)]`` in page order."""
    from concurrent.futures import ThreadPoolExecutor
    pages = [(p, n) for p, n in find_pages(docs_dir) if not only or any(o in p for o in only)]

    def one(item):
        page, note = item
        cells = read_cells(os.path.join(docs_dir, page))
        want = _load_or_run_jax(docs_dir, page, golden_dir, timeout)
        got = run_page("traxla", os.path.join(docs_dir, page), timeout)
        out = io.StringIO()
        same, counted = report(page, cells, want, got, verbose, out)
        print(f"[{page}] {same} of {counted}", file=sys.stderr, flush=True)
        return page, note, same, counted, len(cells) - counted, out.getvalue(), [
            dict(c.to_json(), jax=w, traxla=g, same=compare(c, w, g)[0])
            for c, w, g in zip(cells, want, got)]

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        results = list(pool.map(one, pages))
    for r in results:
        stream.write(r[5])
    return [r[:5] + r[6:] for r in results]


def table(results):
    """The per-page table (markdown) of ``run_all``'s results, with the total line."""
    lines = ["| page | cells counted | same as JAX | not counted | note |",
             "|---|---:|---:|---:|---|"]
    for page, note, same, counted, skipped, _ in results:
        lines.append(f"| {page} | {counted} | {same} | {skipped} | {note or ''} |")
    same = sum(r[2] for r in results)
    counted = sum(r[3] for r in results)
    built = [r for r in results if not r[1]]
    b_same, b_counted = sum(r[2] for r in built), sum(r[3] for r in built)
    pct = lambda a, b: f"{100 * a / b:.1f}%" if b else "-"  # noqa: E731
    lines += ["", f"all {len(results)} pages: {same} of {counted} cells behave as under JAX "
              f"({pct(same, counted)})",
              f"the {len(built)} pages JAX's docs build executes: {b_same} of {b_counted} cells "
              f"behave as under JAX ({pct(b_same, b_counted)})"]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="*")
    parser.add_argument("--all", metavar="DOCS_DIR",
                        help="run every page with code cells under DOCS_DIR (JAX's docs/)")
    parser.add_argument("--golden-dir", help="with --all: JAX's records per page, read when "
                        "stored there, else run and stored")
    parser.add_argument("--jobs", type=int, default=2, help="with --all: pages at a time")
    parser.add_argument("--only", action="append", help="with --all: pages whose path "
                        "contains this (repeatable)")
    parser.add_argument("--table", help="with --all: write the per-page table (markdown)")
    parser.add_argument("--child", choices=("jax", "traxla"), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--golden", help="JAX's records stored by --write-golden (one page)")
    parser.add_argument("--write-golden", help="run JAX on the page and store its records")
    parser.add_argument("--json", help="write every page's per-cell records and verdicts")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per page and run")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the differences")
    args = parser.parse_args(argv)
    if args.child:
        child_main(args.child, args.pages[0], args.out)
        return 0
    if args.all:
        results = run_all(args.all, args.golden_dir, args.jobs, args.timeout, args.only,
                          args.verbose)
        text = table(results)
        print(text)
        if args.table:
            with open(args.table, "w", encoding="utf-8") as f:
                f.write(text)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({r[0]: {"note": r[1], "same": r[2], "counted": r[3], "cells": r[5]}
                           for r in results}, f, indent=1)
        return 0 if all(r[2] == r[3] for r in results) else 1
    if not args.pages:
        parser.error("give pages, or --all DOCS_DIR")
    if args.write_golden:
        records = run_page("jax", args.pages[0], args.timeout)
        with open(args.write_golden, "w", encoding="utf-8") as f:
            json.dump({"page": os.path.basename(args.pages[0]), "cells": records}, f, indent=1)
            f.write("\n")
        return 0
    results, total_same, total = {}, 0, 0
    for page in args.pages:
        cells, want, got = check_page(page, args.golden, args.timeout)
        same, counted = report(page, cells, want, got, args.verbose)
        total_same, total = total_same + same, total + counted
        results[page] = {"same": same, "counted": counted, "cells": [
            dict(c.to_json(), jax=w, traxla=g, same=compare(c, w, g)[0])
            for c, w, g in zip(cells, want, got)]}
    if len(args.pages) > 1:
        print(f"all pages: {total_same} of {total} cells behave as under JAX")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0 if total_same == total else 1


if __name__ == "__main__":
    sys.exit(main())
