#!/usr/bin/env python3
"""Runs optax's, chex's, flax's, equinox's, lineax's, optimistix's, diffrax's and jaxopt's own test files on real JAX and on traxla (as ``jax``).

    python tools/library_suites.py                      # set up, then run optax, chex, flax
    python tools/library_suites.py --libs equinox --git-equinox CLONE   # its tests: from git
    (likewise --git-lineax, --git-optimistix, --git-diffrax, --git-jaxopt: their sdists have no tests)
    python tools/library_suites.py --libs optax,chex    # some of them
    python tools/library_suites.py --only alias_test    # files whose path contains this
    python tools/library_suites.py --setup-only
    python tools/library_suites.py --reuse-jax          # keep JAX results already recorded
    python tools/library_suites.py --python python3 --jobs 12 --budget 540   # a big machine
    python tools/library_suites.py --python python3 --platform tpu --jobs 1  # on a TPU

With ``--python`` the given interpreter runs both ways (it must have the libraries and JAX
installed: no venv is made) and the sdists must already be under ``--src``. ``--budget``
bounds the whole run: no file starts once less than 30 s are left, a running file gets
only what is left, and a file without both results is left out of the counts (and listed).

Setup (once): a separate venv (``--venv``, default /work/libvenv) with the pinned versions
below and their test dependencies from PyPI, and the libraries' sdists (their test files)
unpacked under ``--src`` (default /work/libsrc). Each test file runs in its own process,
``python -m pytest FILE`` (real JAX) and ``python -m traxla.as_jax -m pytest FILE``
(traxla, put on PYTHONPATH from this checkout), with junit XML recorded per run under
``--src``/results. Printed per library: the tests passing on JAX, how many of them pass on
traxla, the wall times, and the most common first lines of the failures on traxla (with a
count of plain assertion failures, where traxla ran and gave a different value).
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PINS = {"optax": "0.2.8", "chex": "0.1.92", "flax": "0.12.8", "equinox": "0.13.8",
        "lineax": "0.1.1", "optimistix": "0.1.0", "diffrax": "0.7.2", "jaxopt": "0.8.5"}
EXTRA = ["jax==0.10.2", "jaxlib==0.10.2", "pytest", "absl-py", "cloudpickle", "scikit-learn", "einops",
         "jaxtyping", "ml-collections", "dm-tree", "flatbuffers>=24.3",
         "beartype"]  # the test dependencies short of TF/torch
# Where each sdist keeps its tests (globs relative to the unpacked sdist).
TEST_GLOBS = {"optax": ["optax/**/*_test.py"], "chex": ["chex/**/*_test.py"],
              "flax": ["tests/**/*_test.py"], "equinox": ["tests/test_*.py"],
              "lineax": ["tests/test_*.py"], "optimistix": ["tests/test_*.py"],
              "diffrax": ["test/test_*.py"], "jaxopt": ["tests/*_test.py"]}
# pytest options a library's own configuration needs changed here: optimistix's addopts ask
# for --benchmark-skip (pytest-benchmark, not installed); its jaxtyping checks are kept.
LIB_PYTEST_ARGS = {"optimistix": [
    "-oaddopts=--jaxtyping-packages=optimistix,beartype.beartype(conf=beartype.BeartypeConf("
    "strategy=beartype.BeartypeStrategy.On))"]}
# Sdists without their tests: the tests come from the project's git repository at the tag
# (a clone given by --git-<lib>, e.g. --git-equinox /path/to/equinox; `git archive` of it).
TESTS_FROM_GIT = {"equinox": ("tests", "v{version}"), "lineax": ("tests", "v{version}"),
                  "optimistix": ("tests", "v{version}"), "diffrax": ("test", "v{version}"),
                  "jaxopt": ("tests", "jaxopt-v{version}")}


def sh(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def setup(venv: str, src: str, git_clones: dict | None = None) -> None:
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        sh([sys.executable, "-m", "venv", venv])
    pkgs = [f"{k}=={v}" for k, v in PINS.items()] + EXTRA
    stamp = os.path.join(venv, ".library_suites_installed")
    if not os.path.exists(stamp) or open(stamp).read() != " ".join(pkgs):
        sh([py, "-m", "pip", "install", "-q", *pkgs])
        with open(stamp, "w") as f:
            f.write(" ".join(pkgs))
    os.makedirs(src, exist_ok=True)
    for lib, ver in PINS.items():
        d = os.path.join(src, f"{lib}-{ver}")
        if os.path.isdir(d):
            continue
        sh([py, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", src,
            f"{lib}=={ver}"])
        sh(["tar", "xzf", os.path.join(src, f"{lib}-{ver}.tar.gz"), "-C", src])
    for lib, (tests, tag) in TESTS_FROM_GIT.items():
        d = os.path.join(src, f"{lib}-{PINS[lib]}")
        if os.path.isdir(os.path.join(d, tests)):
            continue
        clone = (git_clones or {}).get(lib)
        if not clone:
            print(f"  {lib}: its sdist has no {tests}/; give a clone of its repository with "
                  f"--git-{lib} to take them from tag {tag.format(version=PINS[lib])}")
            continue
        archive = subprocess.run(["git", "-C", clone, "archive", tag.format(version=PINS[lib]),
                                  tests], check=True, capture_output=True).stdout
        subprocess.run(["tar", "x", "-C", d], input=archive, check=True)


def test_files(src: str, lib: str) -> list[str]:
    d = os.path.join(src, f"{lib}-{PINS[lib]}")
    out = []
    for g in TEST_GLOBS[lib]:
        out += glob.glob(os.path.join(d, g), recursive=True)
    return sorted(os.path.relpath(p, d) for p in out)


def run_file(venv, src, lib, rel, way, timeout, traxla_root=ROOT, python=None, extra=(),
             platform="cpu"):
    """Runs one test file one way ('jax' or 'traxla'); returns (outcomes, seconds)."""
    d = os.path.join(src, f"{lib}-{PINS[lib]}")
    res = os.path.join(src, "results", lib, way)
    os.makedirs(res, exist_ok=True)
    xml = os.path.join(res, rel.replace(os.sep, "__") + ".xml")
    log = xml[:-4] + ".log"
    py = python or os.path.join(venv, "bin", "python")
    pytest = ["-m", "pytest", "-v", "-p", "no:cacheprovider", "-rN",
              f"--junitxml={xml}", *LIB_PYTEST_ARGS.get(lib, ()), *extra, rel]
    env = dict(os.environ, JAX_PLATFORMS=platform, PYTHONDONTWRITEBYTECODE="1",
               XLA_FLAGS=os.environ.get("XLA_FLAGS", ""), OMP_NUM_THREADS="1")
    if way == "traxla":
        cmd = [py, "-m", "traxla.as_jax", *pytest]
        env["PYTHONPATH"] = traxla_root + os.pathsep + env.get("PYTHONPATH", "")
    else:
        cmd = [py, *pytest]
    if os.path.exists(xml):
        os.remove(xml)
    t0 = time.time()
    try:
        with open(log, "w") as f:
            subprocess.run(cmd, cwd=d, env=env, stdout=f, stderr=subprocess.STDOUT,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        with open(log, "a") as f:
            f.write(f"\nTIMEOUT after {timeout}s\n")
    dt = time.time() - t0
    with open(xml[:-4] + ".time", "w") as f:
        f.write(f"{dt:.2f}")
    return parse(xml, log), dt


def parse(xml: str, log: str) -> dict:
    """{test id: (outcome, first line of the message)}; outcome pass/fail/error/skip.
    A file that produced no XML (killed at the time limit, crashed) gives the outcomes its
    verbose log printed, plus {'<file>': ('crash', last log line)}."""
    if not os.path.exists(xml):
        lines = open(log).read().strip().splitlines() if os.path.exists(log) else []
        out = {}
        for line in lines:
            m = _VERBOSE.match(line)
            if m:
                path, name = m.group(1).split("::", 1)
                cls, _, test = name.rpartition("::")
                classname = path[:-3].replace("/", ".") + ("." + cls if cls else "")
                out[f"{classname}::{test}"] = (_OUTCOME[m.group(2)], "")
        out["<file>"] = ("crash", lines[-1] if lines else "no output")
        return out
    out = {}
    for tc in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{tc.get('classname')}::{tc.get('name')}"
        outcome, msg = "pass", ""
        for child in tc:
            if child.tag in ("failure", "error"):
                outcome = "fail" if child.tag == "failure" else "error"
                msg = (child.get("message") or child.text or "").strip().splitlines()
                msg = msg[0][:160] if msg else ""
                break
            if child.tag == "skipped":
                outcome, msg = "skip", (child.get("message") or "")[:120]
        out[tid] = (outcome, msg)
    return out


_VERBOSE = re.compile(r"^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b")
_OUTCOME = {"PASSED": "pass", "FAILED": "fail", "ERROR": "error", "SKIPPED": "skip",
            "XFAIL": "skip", "XPASS": "pass"}


def load_cached(src, lib, rel, way):
    res = os.path.join(src, "results", lib, way)
    xml = os.path.join(res, rel.replace(os.sep, "__") + ".xml")
    t = xml[:-4] + ".time"
    if not os.path.exists(t):
        return None
    return parse(xml, xml[:-4] + ".log"), float(open(t).read())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--venv", default="/work/libvenv")
    ap.add_argument("--src", default="/work/libsrc")
    ap.add_argument("--libs", default="optax,chex,flax")
    ap.add_argument("--only", default=None, help="run only files whose path contains this")
    ap.add_argument("--sample", type=int, default=0,
                    help="run only this many files per library, evenly spaced in path order")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per file and way")
    ap.add_argument("--jobs", type=int, default=2, help="files run at once")
    ap.add_argument("--setup-only", action="store_true")
    ap.add_argument("--reuse-jax", action="store_true", help="reuse recorded real-JAX results")
    ap.add_argument("--reuse", action="store_true", help="reuse all recorded results (report)")
    ap.add_argument("--json", default=None, help="write the summary here")
    ap.add_argument("--traxla", default=ROOT,
                    help="the traxla checkout put on PYTHONPATH (default: this one)")
    ap.add_argument("--ways", default="jax,traxla", help="run only these (others: recorded)")
    ap.add_argument("--python", default=None,
                    help="run both ways with this interpreter (no venv set-up)")
    ap.add_argument("--pytest-arg", action="append", default=[],
                    help="passed to pytest both ways (repeatable), e.g. -W=ignore::UserWarning")
    ap.add_argument("--platform", default="cpu",
                    help="JAX_PLATFORMS for both ways, e.g. tpu (then use --jobs 1: one "
                         "process at a time can hold a TPU)")
    ap.add_argument("--largest-first", action="store_true",
                    help="start the largest test files first (packs a --budget run better)")
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for the whole run (files not run both ways are left out)")
    for lib in TESTS_FROM_GIT:
        ap.add_argument(f"--git-{lib}", default=None,
                        help=f"a clone of {lib}'s repository (its tests are not in its sdist)")
    args = ap.parse_args(argv)
    if args.python is None:
        setup(args.venv, args.src,
              {lib: getattr(args, f"git_{lib}") for lib in TESTS_FROM_GIT})
    if args.setup_only:
        return 0
    t_end = time.time() + args.budget if args.budget else None
    summary = {}
    for lib in args.libs.split(","):
        files = [f for f in test_files(args.src, lib) if not args.only or args.only in f]
        if args.sample and len(files) > args.sample:
            step = len(files) / args.sample
            files = [files[int(i * step)] for i in range(args.sample)]
        if args.largest_first:
            root = os.path.join(args.src, f"{lib}-{PINS[lib]}")
            files.sort(key=lambda rel: -os.path.getsize(os.path.join(root, rel)))
        results = {}

        def job(rel, way):
            if args.reuse or (args.reuse_jax and way == "jax") or way not in args.ways:
                cached = load_cached(args.src, lib, rel, way)
                if cached is not None or way not in args.ways:
                    return rel, way, cached or ({}, 0.0)
            timeout = args.timeout
            if t_end is not None:
                timeout = min(timeout, t_end - time.time())
                if timeout < 30:
                    return rel, way, None
            got = run_file(args.venv, args.src, lib, rel, way, timeout, args.traxla,
                           args.python, args.pytest_arg, args.platform)
            if timeout < args.timeout and "TIMEOUT" in got[0].get("<file>", ("", ""))[1]:
                return rel, way, None  # cut by the budget, not by the per-file limit
            return rel, way, got

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futs = [pool.submit(job, rel, way) for rel in files for way in ("jax", "traxla")]
            for fut in concurrent.futures.as_completed(futs):
                rel, way, got = fut.result()
                if got is None:
                    continue  # the budget ran out before this file started
                outcomes, dt = results[(rel, way)] = got
                n_pass = sum(o == "pass" for o, _ in outcomes.values())
                print(f"  {lib} {rel} [{way}] {n_pass}/{len(outcomes)} passed in {dt:.1f}s",
                      flush=True)
        not_run = [rel for rel in files
                   if (rel, "jax") not in results or (rel, "traxla") not in results]
        if not_run:
            print(f"  {lib}: {len(not_run)} files not run both ways within the budget, "
                  f"left out: {', '.join(not_run)}", flush=True)
        summary[lib] = report(lib, [f for f in files if f not in not_run], results)
    print()
    print("| library | files | tests passing on JAX | of those passing on traxla | % | "
          "passing on traxla only | JAX wall (s) | traxla wall (s) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for lib, s in summary.items():
        print(f"| {lib} {PINS[lib]} | {s['files']} | {s['jax_pass']} | {s['both_pass']} | "
              f"{s['percent']:.1f} | {s['traxla_only']} | {s['jax_wall']:.0f} | "
              f"{s['traxla_wall']:.0f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


def report(lib, files, results) -> dict:
    jax_pass = both = traxla_only = unreached = 0
    jax_wall = traxla_wall = 0.0
    causes = collections.Counter()
    asserts = 0
    per_file = {}
    for rel in files:
        j, jt = results[(rel, "jax")]
        t, tt = results[(rel, "traxla")]
        jax_wall += jt
        traxla_wall += tt
        jp = {k for k, (o, _) in j.items() if o == "pass"}
        tp = {k for k, (o, _) in t.items() if o == "pass"}
        if "TIMEOUT" in t.get("<file>", ("", ""))[1]:
            # traxla's run hit the time limit: tests it never reached are not counted
            missed = {k for k in jp if k not in t}
            unreached += len(missed)
            jp -= missed
        jax_pass += len(jp)
        both += len(jp & tp)
        traxla_only += len(tp - jp)
        per_file[rel] = (len(jp), len(jp & tp))
        for k in jp - tp:
            o, msg = t.get(k, t.get("<file>", ("missing", "")))
            if k not in t and "<file>" not in t:
                # The file did not collect on traxla: its one error stands for every test.
                errs = [m for (oo, m) in t.values() if oo in ("error", "fail")]
                o, msg = ("collect", errs[0] if errs else "not collected")
            causes[f"[{o}] {msg}"] += 1
            if o == "fail" and msg.startswith("AssertionError"):
                asserts += 1
    pct = 100.0 * both / jax_pass if jax_pass else 100.0
    print(f"\n== {lib} {PINS[lib]}: {both}/{jax_pass} of JAX's passing tests pass on traxla "
          f"({pct:.1f}%); {traxla_only} pass on traxla only; wall {jax_wall:.0f}s (JAX) vs "
          f"{traxla_wall:.0f}s (traxla); {asserts} of the failures are assertion failures; "
          f"{unreached} passing on JAX not reached on traxla before the time limit")
    for rel, (a, b) in sorted(per_file.items(), key=lambda kv: kv[1][1] - kv[1][0]):
        if a != b:
            print(f"   {b:4d}/{a:<4d} {rel}")
    print("   top causes:")
    for msg, n in causes.most_common(25):
        print(f"   {n:5d}  {msg}")
    return {"files": len(files), "jax_pass": jax_pass, "both_pass": both, "percent": pct,
            "traxla_only": traxla_only, "jax_wall": jax_wall, "traxla_wall": traxla_wall,
            "assertion_failures": asserts, "unreached": unreached, "per_file": per_file,
            "top_causes": causes.most_common(40)}


if __name__ == "__main__":
    sys.exit(main())
