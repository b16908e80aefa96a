#!/usr/bin/env python3
"""An ecosystem census: the most downloaded PyPI packages that depend on JAX, run on JAX 0.10.2
and on traxla (as ``jax``).

    python tools/ecosystem_census.py find       # the list: candidates -> metadata -> dependents
    python tools/ecosystem_census.py install    # one venv, jax==0.10.2 pinned, each package
    python tools/ecosystem_census.py scan       # every jax.* name each package uses, resolved
    python tools/ecosystem_census.py run        # tools/census_programs/<pkg>.py, both ways
    python tools/ecosystem_census.py report     # the table (stdout) + docs/ecosystem.md + README
    python tools/ecosystem_census.py all        # the five in order

Stages and their caches (a rerun reads them and needs no network for what they hold):

* **find** reads the registry's package list (``--pypi``, tab-separated: name, version, month,
  rank among the 15,000 most downloaded, summary). Candidates are the ranked names whose name
  or summary mention JAX's world (``KEYWORDS``) plus ``KNOWN`` JAX users; each candidate's
  metadata (``Requires-Dist``) comes from ``pip install --dry-run --no-deps --report`` and is
  cached in ``tools/census_data/requires.json``. A package depends on JAX when it requires
  ``jax``/``jaxlib`` outright (``hard``), through an extra (``extra:NAME``), or through a
  package already found to depend on it (``via:NAME``). Written: ``census_data/packages.json``.
* **install** makes ``--venv`` (default /work/census-venvs/all) with ``jax==0.10.2
  jaxlib==0.10.2`` and installs each dependent there with those two pinned (a constraints
  file), one ``pip install`` per package so one that cannot be had with JAX 0.10.2 fails
  alone (its pip error is the cause). Written: ``census_data/install.json``.
* **scan** reads each installed package's Python files (its ``RECORD``) with ``ast``: every
  ``import jax.x.y``, ``from jax.x import y``, attribute chain on a name bound to a ``jax``
  module or object (``jnp.linalg.norm``), and the option names given to
  ``jax.config.update``. Each name is resolved under real JAX and under the drop-in
  (``import`` of the longest module prefix, then ``getattr``); a name JAX itself lacks (a
  guarded import of an old path) is not held against traxla. Written: ``census_data/scan.json``.
* **run** runs ``tools/census_programs/<pkg>_demo.py`` (a README quick start: fit, sample, solve,
  step) with the venv's Python under JAX and under ``python -m traxla.as_jax`` (this checkout on
  ``PYTHONPATH``); each prints one JSON document last on stdout, compared leaf by leaf (numbers
  within ``rtol=atol=1e-4``, or the program's own ``"_tol"``). Written: ``census_data/run.json``.
* **report** prints the table (package, rank, how it depends on JAX, imports ok, program agrees,
  cause of failure) and the names that do not resolve, writes ``docs/ecosystem.md`` and the
  summary between the ``<!-- census -->`` markers of README.md.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tools", "census_data")
PROGRAMS = os.path.join(ROOT, "tools", "census_programs")
PYPI_TSV = "/work/.library/env/packages/pypi.tsv"
JAX_VERSION = "0.10.2"
TOP = 15000          # the packages considered: ranked among the 15,000 most downloaded
TOP_STRICT = 5000    # a name used by one package ranked this high must resolve
MIN_DEPENDENTS = 40  # at least this many dependents are taken (the most downloaded)

KEYWORDS = re.compile(
    r"jax|flax|optax|haiku|equinox|\bxla\b|tpu|numpyro|chex|orbax|pallas|mjx|brax|keras|"
    r"probability|deepmind|differentiab|autodiff|autograd|probabilistic|mcmc|hamiltonian|"
    r"gaussian process|reinforcement|bayesian|sampling", re.I)
# Known JAX users whose name and summary say nothing of it.
KNOWN = ["transformers", "sentence-transformers", "einops", "optuna", "optree", "diffusers",
         "jaxtyping", "arviz", "treescope", "ml-collections", "mujoco", "tensorflow-datasets",
         "grain", "pytensor", "pymc", "tensorflow-probability", "torchax", "pennylane", "cirq",
         "keras-nlp", "scvi-tools", "google-meridian", "tensorflow-text", "equinox"]
# Dependencies that are JAX itself (or its plugins), not users of it.
JAX_ITSELF = {"jax", "jaxlib", "libtpu", "libtpu-nightly", "jax-cuda12-plugin",
              "jax-cuda12-pjrt", "jax-cuda13-plugin", "jax-cuda13-pjrt", "jax-rocm-plugin",
              "jax-tpu-embedding"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _load(name, default=None):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        return default
    with open(path) as f:
        return json.load(f)


def _save(name, obj):
    os.makedirs(DATA, exist_ok=True)
    with open(os.path.join(DATA, name), "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


# ----------------------------------------------------------------------------------- find
def read_ranked(path: str) -> dict[str, dict]:
    """``{normalized name: {name, rank, summary}}`` for the ranked rows of the package list."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 5 or not cols[3].strip():
                continue
            rank = int(cols[3])
            if rank <= TOP:
                out[_norm(cols[0])] = {"name": cols[0], "rank": rank, "summary": cols[4]}
    return out


def candidates(ranked: dict[str, dict]) -> list[str]:
    names = {n for n, row in ranked.items()
             if KEYWORDS.search(row["name"]) or KEYWORDS.search(row["summary"])}
    names |= {_norm(k) for k in KNOWN if _norm(k) in ranked}
    return sorted(names - JAX_ITSELF, key=lambda n: ranked[n]["rank"])


def lookup_requires(name: str) -> dict:
    """The newest release's name, version and Requires-Dist, by pip's own resolver (only the
    metadata file is fetched where the index serves it)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        try:
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run",
                                "--no-deps", "--ignore-installed", "--quiet", "--report",
                                report, name], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return {"error": "metadata look-up timed out (120 s: pip builds it from an sdist)"}
        if p.returncode != 0 or not os.path.exists(report):
            tail = [l for l in p.stderr.splitlines() if l.strip() and "ignored" not in l]
            return {"error": (tail[-1] if tail else f"pip exit {p.returncode}")[:300]}
        with open(report) as f:
            meta = json.load(f)["install"][0]["metadata"]
    return {"version": meta.get("version"), "requires": meta.get("requires_dist") or []}


_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*([^;]*)(?:;(.*))?$")


def parse_req(req: str):
    """``(normalized name, version spec, extra or None)`` of one Requires-Dist line."""
    m = _REQ.match(req)
    if not m:
        return None, "", None
    extra = None
    if m.group(4):
        e = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", m.group(4))
        extra = e.group(1) if e else None
    return _norm(m.group(1)), m.group(3).strip(), extra


# Extras that only a project's own tests, docs or development use: not a use of JAX.
DEV_EXTRA = re.compile(r"^(tests?|tests?[-_].*|docs?|dev|develop|lint|notebooks?|"
                       r"testing|benchmarks?|examples?)$", re.I)
# Packages that run on JAX as one backend among several without requiring it in metadata
# (they use jax when it is installed: keras's backend, einops's and jaxtyping's array
# types, treescope's renderers).
BACKENDS = {"keras": "backend:jax", "einops": "backend:jax", "jaxtyping": "backend:jax",
            "treescope": "backend:jax"}


def jax_dependence(requires: list[str], dependents: set[str]):
    """How a package depends on JAX: ``hard`` (it requires jax/jaxlib), ``extra:X`` (an extra
    that is not for tests/docs/development), ``via:PKG`` (it requires a package that requires
    JAX outright or via another such package), or None; and JAX's version spec where direct."""
    best, spec = None, ""
    rank = {"hard": 0, "via": 1, "extra": 2}
    for req in requires:
        name, vspec, extra = parse_req(req)
        if extra is not None and DEV_EXTRA.match(extra):
            continue
        if name in ("jax", "jaxlib"):
            kind = "hard" if extra is None else f"extra:{extra}"
        elif name in dependents and extra is None:
            kind = f"via:{name}"
        else:
            continue
        if best is None or rank[kind.split(":")[0]] < rank[best.split(":")[0]]:
            best = kind
            spec = vspec if name in ("jax", "jaxlib") else spec
    return best, spec


def stage_find(args):
    ranked = read_ranked(args.pypi)
    cands = candidates(ranked)
    cache = _load("requires.json", {})
    todo = [n for n in cands if n not in cache]
    print(f"{len(cands)} candidates among the {TOP} most downloaded; "
          f"{len(todo)} metadata look-ups to make", flush=True)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for n, meta in zip(todo, ex.map(lookup_requires, todo)):
            cache[n] = meta
            print(f"  {n}: {meta.get('version', meta.get('error'))}", flush=True)
            if len(cache) % 20 == 0:
                _save("requires.json", cache)
    _save("requires.json", cache)
    # Direct dependents first, then packages that require one of them (to a fixed point).
    found: dict[str, tuple[str, str]] = {n: (k, "") for n, k in BACKENDS.items() if n in cands}
    changed = True
    while changed:
        changed = False
        for n in cands:
            if n in BACKENDS:
                continue
            hard = {m for m, (k, _) in found.items() if k == "hard" or k.startswith("via:")}
            kind, spec = jax_dependence(cache[n].get("requires", []), hard - {n})
            if kind and found.get(n, (None,))[0] != kind:
                found[n] = (kind, spec)
                changed = True
    pkgs = [{"name": ranked[n]["name"], "key": n, "rank": ranked[n]["rank"],
             "version": cache[n]["version"], "depends": kind, "jax_spec": spec,
             "summary": ranked[n]["summary"][:100]}
            for n, (kind, spec) in found.items()]
    pkgs.sort(key=lambda p: p["rank"])
    _save("packages.json", pkgs)
    print(f"{len(pkgs)} depend on jax ({sum(p['depends'] == 'hard' for p in pkgs)} outright)")
    for p in pkgs:
        print(f"  {p['rank']:>6} {p['name']:<28} {p['version']:<12} {p['depends']}")



# -------------------------------------------------------------------------------- install
# What a package needs besides itself to be used at all (an extra naming JAX, a backend).
INSTALL_AS = {"tensorflow-probability": "tensorflow-probability[jax]",
              "transformers": "transformers[flax]"}


# Packages not installed, and why (the cause the table shows).
SKIP_INSTALL = {"torch-xla": "not installed: it pins torch==2.9 whose PyPI wheels bring "
                "several GB of CUDA libraries"}


def _selected(args, pkgs):
    only = {_norm(s) for s in args.only.split(",") if s}
    return [p for p in pkgs if not only or p["key"] in only]


def _pip_cause(text: str) -> str:
    """The line of a pip failure that says why (a conflict with the pinned JAX, a build)."""
    lines = [l.strip() for l in text.splitlines() if l.strip() and "is ignored" not in l]
    for pat in ("conflict is caused by", "requires jax", "depends on jax", "Could not find",
                "No matching distribution", "ResolutionImpossible", "error:", "ERROR:"):
        for i, l in enumerate(lines):
            if pat in l:
                nxt = " ".join(lines[i + 1:i + 3]) if pat == "conflict is caused by" else ""
                return (l + " " + nxt).strip()[:300]
    return (lines[-1] if lines else "pip failed")[:300]


def _pip_install(py, pins, spec, timeout=300):
    """``pip install`` with JAX pinned; a resolver that backtracks past ``timeout`` fails."""
    try:
        return subprocess.run([py, "-m", "pip", "install", "-q", "-c", pins, spec],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(
            [], 1, "", f"ERROR: pip still resolving after {timeout} s (no set of versions "
            f"with jax=={JAX_VERSION} found in time)")


def venv_python(args):
    return os.path.join(args.venv, "bin", "python")


def stage_install(args):
    py = venv_python(args)
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", args.venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", f"jax=={JAX_VERSION}",
                        f"jaxlib=={JAX_VERSION}"], check=True)
    pins = os.path.join(args.venv, "census-constraints.txt")
    with open(pins, "w") as f:
        f.write(f"jax=={JAX_VERSION}\njaxlib=={JAX_VERSION}\n")
    state = _load("install.json", {})
    for p in _selected(args, _load("packages.json", [])):
        spec = INSTALL_AS.get(p["key"], p["name"])
        if p["depends"].startswith("extra:") and p["key"] not in INSTALL_AS:
            spec = f"{p['name']}[{p['depends'][6:]}]"
        if state.get(p["key"], {}).get("ok") and not args.only:
            continue
        if p["key"] in SKIP_INSTALL:
            state[p["key"]] = {"spec": spec, "ok": False, "version": None,
                               "cause": SKIP_INSTALL[p["key"]]}
            continue
        t0 = time.time()
        proc = _pip_install(py, pins, spec)
        note = None
        if proc.returncode != 0 and spec != p["name"]:
            # The extra may ask for another JAX than 0.10.2 (dm-haiku[jax]: jax>=0.11): the
            # package itself, with JAX 0.10.2 beside it.
            note = f"{spec} not installable ({_pip_cause(proc.stderr + proc.stdout)}); " \
                   f"installed without the extra"
            proc = _pip_install(py, pins, p["name"])
        ver = subprocess.run([py, "-m", "pip", "show", p["name"]], capture_output=True,
                             text=True).stdout
        m = re.search(r"^Version: (\S+)", ver, re.M)
        state[p["key"]] = {"spec": spec, "ok": proc.returncode == 0,
                           "version": m.group(1) if m else None, "note": note,
                           "cause": None if proc.returncode == 0 else
                           _pip_cause(proc.stderr + proc.stdout)}
        print(f"  {p['name']:<28} {'ok' if proc.returncode == 0 else 'FAILED':<7}"
              f"{state[p['key']]['version'] or '':<12} {time.time() - t0:5.0f}s "
              f"{state[p['key']]['cause'] or ''}", flush=True)
        _save("install.json", state)
    jv = subprocess.run([py, "-c", "import jax, jaxlib; print(jax.__version__, "
                         "jaxlib.__version__)"], capture_output=True, text=True).stdout.split()
    if jv != [JAX_VERSION, JAX_VERSION]:
        raise SystemExit(f"the venv's jax/jaxlib are {jv}, not {JAX_VERSION}")



# ----------------------------------------------------------------------------------- scan
class JaxUses(ast.NodeVisitor):
    """Collects the ``jax.*`` names one module imports or uses (file-wide aliases: a name
    shadowed locally may yield a name JAX lacks too, which the scan then leaves out)."""

    def __init__(self):
        self.alias: dict[str, str] = {}
        self.names: set[str] = set()

    @staticmethod
    def _is_jax(mod):
        return mod == "jax" or (mod or "").startswith("jax.")

    def visit_Import(self, node):
        for a in node.names:
            if self._is_jax(a.name):
                self.names.add(a.name)
                if a.asname:
                    self.alias[a.asname] = a.name
                else:
                    self.alias["jax"] = "jax"

    def visit_ImportFrom(self, node):
        if node.level or not self._is_jax(node.module):
            return
        for a in node.names:
            if a.name == "*":
                self.names.add(node.module)
                continue
            full = f"{node.module}.{a.name}"
            self.names.add(full)
            self.alias[a.asname or a.name] = full

    def _chain(self, node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.alias:
            return ".".join([self.alias[node.id]] + parts[::-1])
        return None

    def visit_Attribute(self, node):
        chain = self._chain(node)
        if chain is not None:
            self.names.add(chain)
        else:
            self.generic_visit(node)

    def visit_Call(self, node):
        # jax.config.update("jax_enable_x64", True): the option is a name on jax.config.
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "update" and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                and self._chain(f.value) == "jax.config"):
            self.names.add("jax.config." + node.args[0].value)
        self.generic_visit(node)


def _site_packages(args):
    out = subprocess.run([venv_python(args), "-c", "import sysconfig; "
                          "print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return out


def package_files(site: str, dist_name: str):
    """The package's installed ``.py`` files and its top-level modules, from its RECORD."""
    key = _norm(dist_name).replace("-", "_")
    for entry in os.listdir(site):
        if entry.endswith(".dist-info") and \
                _norm(entry[:-len(".dist-info")].rsplit("-", 1)[0]).replace("-", "_") == key:
            break
    else:
        return [], []
    files, tops = [], set()
    with open(os.path.join(site, entry, "RECORD")) as f:
        for line in f:
            path = line.split(",", 1)[0]
            if not path.endswith(".py") or path.startswith("..") or ".dist-info/" in path:
                continue
            files.append(os.path.join(site, path))
            top = path.split("/", 1)[0]
            top = top[:-3] if top.endswith(".py") else top
            if top.isidentifier() and top not in ("tests", "test", "docs", "examples"):
                tops.add(top)
    top_level = os.path.join(site, entry, "top_level.txt")
    if os.path.exists(top_level):
        with open(top_level) as f:
            listed = {l.strip() for l in f if l.strip() and "/" not in l}
        tops = (tops & listed) or tops
    return files, sorted(tops)


def scan_files(files):
    names = set()
    for path in files:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                tree = ast.parse(f.read(), path)
        except (SyntaxError, ValueError, OSError):
            continue
        v = JaxUses()
        v.visit(tree)
        names |= v.names
    return names


def _resolve_in_venv(args, names, modules, under_traxla: bool):
    with tempfile.TemporaryDirectory() as tmp:
        inp, outp = os.path.join(tmp, "in.json"), os.path.join(tmp, "out.json")
        with open(inp, "w") as f:
            json.dump({"names": sorted(names), "modules": modules}, f)
        cmd = [venv_python(args)] + (["-m", "traxla.as_jax"] if under_traxla else []) + \
            [os.path.join(ROOT, "tools", "census_resolve.py"), inp, outp]
        env = dict(os.environ, PYTHONPATH=args.traxla, JAX_PLATFORMS="cpu", KERAS_BACKEND="jax",
                   TF_CPP_MIN_LOG_LEVEL="3")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                           cwd=tmp)
        if not os.path.exists(outp):
            err = [l for l in (p.stderr or "").splitlines() if l.strip()]
            msg = (err[-1] if err else f"exit {p.returncode}")[:300]
            return {"names": {n: msg for n in names}, "modules": {m: msg for m in modules}}
        with open(outp) as f:
            return json.load(f)


def stage_scan(args):
    site = _site_packages(args)
    installed = _load("install.json", {})
    state = _load("scan.json", {"packages": {}, "names": {}})
    pkgs = [p for p in _selected(args, _load("packages.json", []))
            if installed.get(p["key"], {}).get("ok")]
    for p in pkgs:
        files, tops = package_files(site, p["name"])
        names = sorted(n for n in scan_files(files) if not n.startswith("jax.numpy.ndarray."))
        state["packages"][p["key"]] = {"files": len(files), "modules": tops, "names": names}
    every = sorted({n for k in state["packages"] for n in state["packages"][k]["names"]})
    print(f"{len(every)} distinct jax.* names in {len(state['packages'])} packages", flush=True)
    resolved = {}
    for label, under in (("jax", False), ("traxla", True)):
        r = _resolve_in_venv(args, every, [], under)
        resolved[label] = r["names"]
    state["names"] = {n: {"jax": resolved["jax"].get(n), "traxla": resolved["traxla"].get(n)}
                      for n in every}
    # Each package's own import, both ways (its own process: libraries set global state).
    def imports(p):
        mods = state["packages"][p["key"]]["modules"]
        return p["key"], {lbl: _resolve_in_venv(args, [], mods, under)["modules"]
                          for lbl, under in (("jax", False), ("traxla", True))}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for key, res in ex.map(imports, pkgs):
            state["packages"][key]["import"] = res
            bad = {m: e for m, e in res["traxla"].items() if e and not res["jax"].get(m)}
            print(f"  {key:<28} {len(state['packages'][key]['names']):4d} names; "
                  f"import under traxla: {'ok' if not bad else bad}", flush=True)
    _save("scan.json", state)



# ------------------------------------------------------------------------------------ run
def _last_json(text: str):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                return None
    return None


def compare(a, b, rtol, atol, path="$"):
    """None when ``a`` and ``b`` agree (numbers within tolerance), else where they differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(set(a) ^ set(b))} differ"
        for k in a:
            d = compare(a[k], b[k], rtol, atol, f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = compare(x, y, rtol, atol, f"{path}[{i}]")
            if d:
                return d
        return None
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if math.isnan(a) and math.isnan(b):
            return None
        if a == b or abs(a - b) <= atol + rtol * abs(a):
            return None
        return f"{path}: {a!r} (jax) vs {b!r} (traxla)"
    return None if a == b else f"{path}: {a!r} (jax) vs {b!r} (traxla)"


def _cause(stderr: str) -> str:
    lines = [l for l in stderr.strip().splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", l.strip()) or \
                re.match(r"^[\w.]+: ", l.strip()) and not l.startswith(" "):
            return l.strip()[:300]
    return (lines[-1].strip() if lines else "no output")[:300]


def run_program(args, path, under_traxla: bool):
    cmd = [venv_python(args)] + (["-m", "traxla.as_jax"] if under_traxla else []) + [path]
    env = dict(os.environ, PYTHONPATH=args.traxla, JAX_PLATFORMS="cpu", KERAS_BACKEND="jax",
               TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore", CUDA_VISIBLE_DEVICES="")
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout,
                           cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return {"ok": False, "cause": f"timed out after {args.timeout} s",
                "seconds": round(time.time() - t0, 1)}
    out = _last_json(p.stdout)
    res = {"seconds": round(time.time() - t0, 1), "ok": p.returncode == 0 and out is not None}
    if res["ok"]:
        res["result"] = out
    else:
        res["cause"] = ("printed no JSON" if not p.returncode else _cause(p.stderr)
                        if p.stderr.strip() else f"killed by signal {-p.returncode}"
                        if p.returncode < 0 else f"exit status {p.returncode}, no message")
    return res


# Programs that work around a package's own failure under JAX 0.10.2 (the table says so).
_TFP_SHIM = ("the program first sets jax.interpreters.xla.pytype_aval_mappings, which tfp "
             "writes and JAX 0.10.2 no longer has (without it the import fails under JAX and "
             "traxla alike)")
PROGRAM_NOTES = {"tensorflow-probability": _TFP_SHIM, "tfp-nightly": _TFP_SHIM,
                 "distrax": _TFP_SHIM.replace("tfp writes", "tfp (imported by distrax) writes")}


def program_name(key: str) -> str:
    """``tools/census_programs/<key>_demo.py`` (not ``<key>.py``: the script's folder is first
    on ``sys.path``, and a script named ``optax.py`` would shadow optax)."""
    return key.replace("-", "_") + "_demo.py"


def stage_run(args):
    state = _load("run.json", {})
    installed = _load("install.json", {})
    pkgs = [p for p in _selected(args, _load("packages.json", []))
            if os.path.exists(os.path.join(PROGRAMS, program_name(p["key"])))]

    def one(p):
        path = os.path.join(PROGRAMS, program_name(p["key"]))
        if not installed.get(p["key"], {}).get("ok"):
            return p["key"], {"jax": {"ok": False, "cause": "not installed"}}
        r = {"jax": run_program(args, path, False), "traxla": run_program(args, path, True)}
        if r["jax"]["ok"] and r["traxla"]["ok"]:
            tol = r["jax"]["result"].pop("_tol", 1e-4)
            r["traxla"]["result"].pop("_tol", None)
            r["diff"] = compare(r["jax"]["result"], r["traxla"]["result"], tol, tol)
        return p["key"], r

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for key, r in ex.map(one, pkgs):
            state[key] = r
            j, t = r["jax"], r.get("traxla", {})
            verdict = ("agrees" if j["ok"] and t.get("ok") and not r.get("diff") else
                       f"DIFFERS {r['diff']}" if r.get("diff") else
                       f"jax fails: {j.get('cause')}" if not j["ok"] else
                       f"traxla fails: {t.get('cause')}")
            print(f"  {key:<28} jax {j.get('seconds', 0):5.1f}s traxla "
                  f"{t.get('seconds', 0):5.1f}s  {verdict}", flush=True)
            _save("run.json", state)



# --------------------------------------------------------------------------------- report
def build_rows():
    pkgs = _load("packages.json", [])
    installed, scan, run = _load("install.json", {}), _load("scan.json", {}), _load("run.json", {})
    names = scan.get("names", {}) if scan else {}
    rank_of = {p["key"]: p["rank"] for p in pkgs}
    users: dict[str, list[str]] = {}
    for key, s in (scan or {}).get("packages", {}).items():
        for n in s["names"]:
            users.setdefault(n, []).append(key)
    rows, seen = [], set()
    for p in pkgs:
        if p["key"] in seen:  # one row a package, whatever the stages' files hold
            continue
        seen.add(p["key"])
        key, inst = p["key"], installed.get(p["key"], {})
        s = (scan or {}).get("packages", {}).get(key)
        row = {"name": p["name"], "rank": p["rank"], "depends": p["depends"],
               "version": inst.get("version") or p["version"], "imports": "", "program": "",
               "cause": "", "installed": bool(inst.get("ok"))}
        causes = []
        if not inst:
            row["imports"] = row["program"] = "—"
            causes.append("not installed yet")
        elif not inst.get("ok"):
            row["imports"] = row["program"] = "—"
            causes.append(f"not installable with jax {JAX_VERSION}: {inst.get('cause')}")
        elif s is not None:
            missing = [n for n in s["names"] if names.get(n, {}).get("jax") is None
                       and names.get(n, {}).get("traxla") is not None]
            imp = s.get("import", {})
            bad_mod = {m: e for m, e in imp.get("traxla", {}).items()
                       if e and not imp.get("jax", {}).get(m)}
            jax_mod_bad = {m: e for m, e in imp.get("jax", {}).items() if e}
            row["imports"] = ("yes" if not missing and not bad_mod else
                              f"no ({len(missing)} of {len(s['names'])} names)" if missing
                              else "no")
            if bad_mod:
                m, e = next(iter(bad_mod.items()))
                causes.append(f"import {m}: {e}")
            if missing:
                causes.append("unresolved: " + ", ".join(missing[:3]) +
                              (f" (+{len(missing) - 3})" if len(missing) > 3 else ""))
            if jax_mod_bad and not bad_mod:
                m, e = next(iter(jax_mod_bad.items()))
                causes.append(f"(import {m} fails under JAX too: {e})")
        r = run.get(key)
        if r is None and inst.get("ok"):
            row["program"] = "—"
            causes.append("program not run yet" if os.path.exists(
                os.path.join(PROGRAMS, program_name(key))) else "no program yet")
        elif r is not None and inst.get("ok"):
            j, t = r["jax"], r.get("traxla", {})
            if not j.get("ok"):
                row["program"] = "n/a (fails under JAX)"
                causes.append(f"program under JAX: {j.get('cause')}")
            elif not t.get("ok"):
                row["program"] = "no (fails)"
                causes.append(f"program: {t.get('cause')}")
            elif r.get("diff"):
                row["program"] = "no (differs)"
                causes.append(f"program differs at {r['diff']}")
            else:
                row["program"] = "yes"
            if key in PROGRAM_NOTES:
                causes.append(PROGRAM_NOTES[key])
        row["cause"] = "; ".join(causes)
        rows.append(row)
    unresolved = []
    for n, res in names.items():
        if res.get("jax") is None and res.get("traxla") is not None:
            us = sorted(users.get(n, []), key=lambda k: rank_of.get(k, 10 ** 9))
            required = len(us) >= 2 or any(rank_of.get(k, 10 ** 9) <= TOP_STRICT for k in us)
            unresolved.append({"name": n, "users": us, "required": required,
                               "error": res["traxla"]})
    unresolved.sort(key=lambda u: (-len(u["users"]), u["name"]))
    total = len(names)
    in_jax = sum(1 for r in names.values() if r.get("jax") is None)
    return rows, unresolved, {"names": total, "names_in_jax": in_jax}


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def render_table(rows):
    out = ["| package | rank | depends on jax | version | imports ok | program agrees | "
           "cause of failure |", "|---|---:|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['name']} | {r['rank']} | {r['depends']} | {r['version']} | "
                   f"{r['imports']} | {r['program']} | {_md_escape(r['cause'])} |")
    return "\n".join(out)


def summary_line(rows, stats):
    installed = [r for r in rows if r.get("installed")]
    scanned = [r for r in rows if r["imports"] not in ("—", "")]
    runs = [r for r in rows if r["program"] not in ("—", "", "n/a (fails under JAX)")]
    agree = [r for r in runs if r["program"] == "yes"]
    return (f"{len(rows)} packages among PyPI's {TOP} most downloaded depend on jax; "
            f"{len(installed)} install with jax {JAX_VERSION}; of the {len(scanned)} scanned, "
            f"{sum(r['imports'] == 'yes' for r in scanned)} import under traxla with all their "
            f"jax.* names resolving ({stats['names_in_jax']} "
            f"distinct names that exist in JAX); {len(agree)} of {len(runs)} programs that run "
            f"under JAX give the same results under traxla.")


def stage_report(args):
    rows, unresolved, stats = build_rows()
    table = render_table(rows)
    print(table)
    print()
    req = [u for u in unresolved if u["required"]]
    print(f"jax.* names that resolve under JAX but not traxla: {len(unresolved)} "
          f"({len(req)} used by two or more packages or one in the top {TOP_STRICT})")
    for u in unresolved:
        print(f"  {'*' if u['required'] else ' '} {u['name']:<60} {len(u['users'])} "
              f"{','.join(u['users'][:4])}  {u['error'][:100]}")
    summ = summary_line(rows, stats)
    print("\n" + summ)
    doc = [
        "# Ecosystem census: PyPI packages that depend on JAX, on traxla",
        "",
        "Made by `python tools/ecosystem_census.py all` (see its docstring): the packages among",
        f"PyPI's {TOP} most downloaded (the registry's ranked list) whose metadata require",
        "`jax` — outright (`hard`), through an extra (`extra:X`), or through another such package",
        "(`via:P`) — or that use jax as one backend among several without requiring it",
        f"(`backend:jax`: {', '.join(sorted(BACKENDS))}), installed together in one venv with",
        f"`jax=={JAX_VERSION} jaxlib=={JAX_VERSION}` pinned.",
        "*imports ok*: the package imports under `python -m traxla.as_jax` and every `jax.*`",
        "module and name its source imports or uses (found with `ast`, `jax._src.*` included)",
        "resolves under traxla wherever it resolves under JAX. *program agrees*: its",
        "`tools/census_programs/<pkg>_demo.py` (a quick start: fit, sample, solve, step) prints the",
        "same JSON under JAX and under traxla (numbers within 1e-4 unless the program says).",
        "",
        summ,
        "",
        render_table(rows),
        "",
        "## `jax.*` names that resolve under JAX but not under traxla",
        "",
        "(**bold**: used by two or more of the packages, or by one among the "
        f"{TOP_STRICT} most downloaded)",
        "",
        "| name | packages | error under traxla |",
        "|---|---|---|",
    ]
    for u in unresolved:
        nm = f"**{u['name']}**" if u["required"] else u["name"]
        doc.append(f"| {nm} | {len(u['users'])}: {', '.join(u['users'][:6])} | "
                   f"{_md_escape(u['error'][:120])} |")
    if not unresolved:
        doc.append("| (none) | | |")
    if DATA != os.path.join(ROOT, "tools", "census_data"):
        return  # a run with --data elsewhere (another checkout under test): the table only
    with open(os.path.join(ROOT, "docs", "ecosystem.md"), "w") as f:
        f.write("\n".join(doc) + "\n")
    readme = os.path.join(ROOT, "README.md")
    with open(readme) as f:
        text = f.read()
    table = []  # the per-package table of docs/ecosystem.md
    for line in doc:
        if line.startswith("| package | rank"):
            table = [line]
        elif table and line.startswith("|"):
            table.append(line)
        elif table:
            break
    block = (f"<!-- census -->\n{summ}\n\n" + "\n".join(table) + "\n\nThe names left "
             "unresolved, by how many packages use them, are in [docs/ecosystem.md]"
             "(docs/ecosystem.md), made by `python tools/ecosystem_census.py all`.\n"
             "<!-- /census -->")
    if "<!-- census -->" in text:
        text = re.sub(r"<!-- census -->.*?<!-- /census -->", lambda m: block, text, flags=re.S)
        with open(readme, "w") as f:
            f.write(text)


# ----------------------------------------------------------------------------------- main
STAGES = {"find": "stage_find", "install": "stage_install", "scan": "stage_scan",
          "run": "stage_run", "report": "stage_report"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stage", choices=list(STAGES) + ["all"])
    ap.add_argument("--pypi", default=PYPI_TSV, help="the registry's package list (TSV)")
    ap.add_argument("--venv", default="/work/census-venvs/all")
    ap.add_argument("--only", default="", help="comma-separated packages (install/scan/run)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--traxla", default=ROOT, help="the traxla checkout put on PYTHONPATH "
                    "(default: this one)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program run")
    ap.add_argument("--data", default=None, help="where the stages' JSON goes (default "
                    "tools/census_data); report then writes no docs/README")
    args = ap.parse_args(argv)
    if args.data:
        global DATA
        DATA = os.path.abspath(args.data)
    for stage in (list(STAGES) if args.stage == "all" else [args.stage]):
        globals()[STAGES[stage]](args)


if __name__ == "__main__":
    main()
