#!/usr/bin/env python3
"""A differential fuzzer: random programs over the lax primitives, each run by JAX and by
traxla and compared for values, jaxpr text and errors.

    python tools/fuzz_differential.py --seed 1 --programs 10000            # the long run
    python tools/fuzz_differential.py --seed 1 --programs 500 --show-failures
    python tools/fuzz_differential.py --seed 1 --only 17 --show-failures   # one program again
    python tools/fuzz_differential.py --replay '<recipe JSON>'             # a shrunk recipe

Program ``i`` of seed ``S`` is drawn from ``random.Random(f"{S}:{i}")`` by
``tools/fuzz_recipes.py`` and built twice from the same recipe, once with ``jax`` and once
with ``traxla``. Each library gives two outcomes: the value (the program run under its
transformation: eager, jit, vmap, grad, jvp, scan, cond, switch, while, ...) and
``str(make_jaxpr(fn)(*args))``. Each outcome is a value or an exception; a program falls in
the worst of these buckets:

* ``crashes``: the worker process died or hung while traxla ran (a segfault is counted, not
  the end of the run), or traxla raised an internal error (AssertionError, KeyError,
  AttributeError, ...) that JAX did not;
* ``wrong-values``: both returned, and the tree structure, a shape, dtype or weak type, or a
  value differs (bit for bit when every op of the program is exact, else within a tolerance
  of the dtype), or traxla returned where JAX raised;
* ``error-differs``: the exception classes differ, or traxla raised where JAX returned;
* ``jaxpr-differs``: the jaxpr texts differ;
* ``message-differs``: the same exception class, another first line of the message;
* ``jax-bug``: JAX failed where traxla did not: the process died while JAX ran (XLA's
  constant folder dies of SIGFPE on ``jit(lambda: lax.rem(iota(uint8, 1), iota(uint8,
  1)))()``), JAX raised an internal error (an
  AttributeError, KeyError, ...: grad of ``reduce_min`` over no axes of a Python float is
  one), or let an invalid program through its typing rules and failed only when lowering it
  (``Cannot lower jaxpr with verifier errors``: JAX 0.10.2's reshape does not check the
  element count) where traxla refused it while tracing, or ran eagerly a program that it
  refuses to trace (eager ``lax.slice`` of a NumPy array clamps out-of-range limits) where
  traxla refuses both with the class of JAX's tracing error;
* ``same-error``: the same exception class and first line; ``ok``: everything matches.

Programs run in a pool of worker processes (``--workers``, 2 by default; 0 runs them here),
each importing JAX and traxla once. The last line is the summary, e.g.
``fuzz seed=1 programs=10000: ok=.. same-error=.. crashes=0 wrong-values=0 ...``; the exit
status is 1 when any crash, wrong value, error difference or jaxpr difference was found.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import select
import subprocess
import sys
import threading
import time
import warnings

import numpy as np

_TOOLS = os.path.dirname(os.path.abspath(__file__))
# this checkout's traxla (not another one installed in the environment), then the recipes
sys.path[:0] = [os.path.dirname(_TOOLS), _TOOLS]
import fuzz_recipes  # noqa: E402

BUCKETS = ["ok", "same-error", "jax-bug", "message-differs", "jaxpr-differs",
           "error-differs", "wrong-values", "crashes"]
FAILING = ("crashes", "wrong-values", "error-differs", "jaxpr-differs")
INTERNAL = {"AssertionError", "KeyError", "AttributeError", "IndexError", "NameError",
            "UnboundLocalError", "RecursionError", "ZeroDivisionError", "SystemError",
            "MemoryError", "XlaRuntimeError", "JaxRuntimeError", "MLIRError", "StopIteration",
            "UnicodeError", "OverflowError", "LoweringError"}
GRAD_LIKE = ("grad", "jvp", "jit_grad")


def recipe_for(seed, index):
    return fuzz_recipes.generate(random.Random(f"{seed}:{index}"))


# -- one program in one library ----------------------------------------------------------------

def _outcome(thunk):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", thunk())
        except Exception as e:  # noqa: BLE001 - compared by class across the two libraries
            return ("error", e)


def run_library(lib, recipe):
    """The value and the jaxpr text of the recipe's program in ``lib`` (outcome pairs)."""
    def value():
        fn, args = fuzz_recipes.build(lib, recipe)
        out = fn(*args)
        _block(out)
        return out

    def jaxpr():
        fn, args = fuzz_recipes.build(lib, recipe)
        return str(lib.api.make_jaxpr(fn)(*args))

    return {"value": _outcome(value), "jaxpr": _outcome(jaxpr)}


def _block(out):
    for leaf in _leaves(out):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()


def _leaves(x):
    if isinstance(x, (tuple, list)):
        return [y for z in x for y in _leaves(z)]
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in _leaves(x[k])]
    return [x]


def _structure(x):
    if isinstance(x, (tuple, list, dict)):
        items = [x[k] for k in sorted(x)] if isinstance(x, dict) else x
        return f"{type(x).__name__}({','.join(_structure(y) for y in items)})"
    return "*"


# -- comparing the two outcomes -----------------------------------------------------------------

def _first_line(e):
    text = str(e).strip().splitlines()
    line = text[0] if text else ""
    # (JAX prints an integer param as np.int64(1) or 1 depending on which of its caches
    # served the call before: the two read the same here)
    line = re.sub(r"np\.int64\((-?\d+)\)", r"\1", line)
    return re.sub(r"0x[0-9a-f]+", "0x?", line)


def _tolerance(dtype):
    if dtype in (np.float16,) or dtype.name == "bfloat16":
        return 2e-2
    return 2e-5


def _same_bits(x, y):
    """Equal values, NaN equal to NaN whatever its payload, and -0.0 distinct from 0.0."""
    if x.dtype.kind == "c":
        return _same_bits(x.real, y.real) and _same_bits(x.imag, y.imag)
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        a, b = x.astype(np.float32), y.astype(np.float32)
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b)) and np.array_equal(a[~nan], b[~nan])
                    and np.array_equal(np.signbit(a[~nan]), np.signbit(b[~nan])))
    return bool(np.array_equal(x, y))


def _close(x, y):
    if x.dtype.kind == "c":
        return _close(x.real, y.real) and _close(x.imag, y.imag)
    a, b = x.astype(np.float64), y.astype(np.float64)
    tol = _tolerance(x.dtype)
    with np.errstate(all="ignore"):
        return bool(np.all(np.isclose(a, b, rtol=tol, atol=tol, equal_nan=True)))


def _host(leaf):
    """A leaf as a NumPy array of its own dtype (JAX hands back some Python-scalar results as
    ``TypedFloat`` and the like: Python numbers that carry a dtype)."""
    x = np.asarray(leaf)
    dtype = getattr(leaf, "dtype", None)
    if isinstance(dtype, np.dtype) and x.dtype != dtype:
        x = x.astype(dtype)
    return x


def compare_values(recipe, ours, theirs):
    """None when traxla's value ``ours`` matches JAX's ``theirs``, else what differs."""
    if _structure(ours) != _structure(theirs):
        return f"structure {_structure(ours)} != {_structure(theirs)}"
    exact = recipe.get("exact", False) and recipe["transform"] not in GRAD_LIKE
    for k, (a, b) in enumerate(zip(_leaves(ours), _leaves(theirs))):
        # (JAX hands some inputs back as NumPy arrays, e.g. from vmap of an identity, where
        # traxla returns an Array: the container is not compared, its contents are)
        x, y = _host(a), _host(b)
        if x.shape != y.shape:
            return f"leaf {k}: shape {x.shape} != {y.shape}"
        if x.dtype != y.dtype:
            return f"leaf {k}: dtype {x.dtype} != {y.dtype}"
        wa, wb = getattr(a, "weak_type", None), getattr(b, "weak_type", None)
        if wa is not None and wb is not None and wa != wb:
            return f"leaf {k}: weak_type {wa} != {wb}"
        if x.dtype.kind in "fc" or x.dtype.name == "bfloat16":
            ok = _same_bits(x, y) if exact else _close(x, y)
        else:
            ok = bool(np.array_equal(x, y))
        if not ok:
            return f"leaf {k}: values differ\ntraxla: {x!r}\njax:    {y!r}"
    return None


def _compare_outcomes(what, recipe, ours, theirs):
    """(bucket, detail) for one pair of outcomes (what: "value" or "jaxpr")."""
    (o_kind, o), (t_kind, t) = ours, theirs
    if o_kind == "ok" and t_kind == "ok":
        if what == "jaxpr":
            return ("ok", None) if o == t else ("jaxpr-differs", f"traxla:\n{o}\njax:\n{t}")
        diff = compare_values(recipe, o, theirs=t)
        return ("ok", None) if diff is None else ("wrong-values", f"{what}: {diff}")
    if o_kind == "ok":
        return ("wrong-values", f"{what}: traxla returned where JAX raised "
                                f"{type(t).__name__}: {_first_line(t)}")
    o_name = type(o).__name__
    t_name = type(t).__name__ if t_kind == "error" else None
    detail = (f"{what}: traxla raised {o_name}: {_first_line(o)}\n"
              + (f"   JAX raised {t_name}: {_first_line(t)}" if t_name else "   JAX returned"))
    if o_name != t_name:
        return ("crashes" if o_name in INTERNAL else "error-differs"), detail
    if _first_line(o) != _first_line(t):
        return "message-differs", detail
    return "same-error", None


def _jax_fails_late(ours, theirs):
    """JAX traced an invalid program (its typing rule let it through: reshape to another size
    is one; so is its JVP of ``reduce_prod`` over a repeated axis) and failed only when
    lowering it (the verifier's errors, or MLIR refusing to create an operation), where
    traxla refused it while tracing."""
    return (ours[0] == "error" and type(ours[1]).__name__ in ("TypeError", "ValueError")
            and theirs[0] == "error"
            and (str(theirs[1]).startswith("Cannot lower jaxpr with verifier errors")
                 or (type(theirs[1]).__name__ == "MLIRError"
                     and str(theirs[1]).startswith("Operation creation failed"))))


def _jax_eager_only(ours, theirs):
    """JAX ran the program eagerly but refuses to trace it, and traxla refuses both with the
    class JAX's tracing raises (JAX 0.10.2's eager ``lax.slice`` of a NumPy array clamps
    out-of-range limits as NumPy does; traced, it raises TypeError)."""
    (ov, o), (oj, oe), (tv, _), (tj, te) = (ours["value"], ours["jaxpr"], theirs["value"],
                                            theirs["jaxpr"])
    return (tv == "ok" and tj == "error" and ov == "error" and oj == "error"
            and type(o).__name__ == type(te).__name__ == type(oe).__name__
            and type(te).__name__ not in INTERNAL)


def _jax_crashes(ours, theirs):
    """JAX raised an internal error (its own bug) and traxla did not raise the same."""
    return (theirs[0] == "error" and type(theirs[1]).__name__ in INTERNAL
            and not (ours[0] == "error" and type(ours[1]).__name__ == type(theirs[1]).__name__))


def check(recipe, libs, on_stage=None):
    """(bucket, detail) of one recipe; ``libs`` is ``(traxla, jax)`` from ``library``.
    ``on_stage(name)`` is told which library is about to run (a worker reports it, so that a
    process killed by a signal is blamed on the right one)."""
    if on_stage:
        on_stage("traxla")
    ours = run_library(libs[0], recipe)
    if on_stage:
        on_stage("jax")
    theirs = run_library(libs[1], recipe)
    if _jax_fails_late(ours["value"], theirs["value"]) or _jax_eager_only(ours, theirs):
        return "jax-bug", None
    results = [("jax-bug", None) if _jax_crashes(ours[w], theirs[w]) else
               _compare_outcomes(w, recipe, ours[w], theirs[w]) for w in ("value", "jaxpr")]
    results.sort(key=lambda r: BUCKETS.index(r[0]))
    bucket = results[-1][0]
    details = [d for b, d in results if d is not None and b != "same-error"]
    return bucket, "\n".join(details) or None


def load_libraries():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    return fuzz_recipes.library("traxla"), fuzz_recipes.library("jax")


# -- the worker processes -----------------------------------------------------------------------

def worker_main():
    """Read one JSON recipe a line from stdin, answer one JSON result a line."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the libraries print goes to stderr, not into the protocol
    libs = load_libraries()
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        recipe = json.loads(line)
        try:
            bucket, detail = check(
                recipe, libs, lambda name: out.write(json.dumps({"stage": name}) + "\n"))
        except BaseException as e:  # noqa: BLE001 - a fuzzer bug, reported as a crash
            bucket, detail = "crashes", f"fuzzer: {type(e).__name__}: {e}"
        out.write(json.dumps({"bucket": bucket, "detail": detail}) + "\n")


class Worker:
    """One worker process, restarted after it dies or hangs."""

    def __init__(self, timeout, command=None, reap_timeout=5):
        self.timeout = timeout
        self.reap_timeout = reap_timeout  # how long a worker that sent no answer may take to end
        self.command = command or [sys.executable, os.path.abspath(__file__), "--worker"]
        self.proc = None
        self._buf = b""

    def start(self):
        env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
        self.proc = subprocess.Popen(self.command,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)
        self._buf = b""
        self._read(600)

    def _read(self, timeout):
        """The worker's next JSON line, or None when it sent none within ``timeout`` seconds
        (or closed its output). The lines are split here, from the pipe's bytes: a buffered
        reader's readline could take several lines from the pipe at once (a fast program's
        stages and answer), and select would then wait for bytes already read."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, recipe):
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps(recipe) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass
        stage = None
        answer = self._read(self.timeout)
        while answer is not None and "stage" in answer:
            stage = answer["stage"]
            answer = self._read(self.timeout)
        if answer is not None:
            return answer["bucket"], answer["detail"]
        try:  # at the end of its output the worker is dead or dying: reap it
            self.proc.wait(self.reap_timeout)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            what = f"the worker hung for {self.timeout} s"
        else:
            what = f"the worker died (exit status {self.proc.returncode})"
        what += f" ({stage or 'no library'} running)"
        self.proc = None
        if stage == "jax":  # JAX (XLA under JAX) killed the process: not traxla's crash
            return "jax-bug", f"while JAX ran: {what}"
        return "crashes", what

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# -- shrinking a failure to a smaller recipe ----------------------------------------------------

def _live_steps(recipe):
    """The steps the outputs depend on."""
    live, todo = set(), [r[1] for r in recipe["outputs"] if r[0] == "v"]
    while todo:
        k = todo.pop()
        if k not in live:
            live.add(k)
            todo += [r[1] for r in recipe["steps"][k][1] if r[0] == "v"]
    return live


def _renumber(recipe, keep_steps, keep_inputs):
    steps_map = {old: new for new, old in enumerate(sorted(keep_steps))}
    in_map = {old: new for new, old in enumerate(sorted(keep_inputs))}

    def ref(r):
        if r[0] == "v":
            return ["v", steps_map[r[1]]]
        if r[0] == "in":
            return ["in", in_map[r[1]]]
        return r

    new = dict(recipe)
    new["steps"] = [[op, [ref(r) for r in refs], params]
                    for k, (op, refs, params) in enumerate(recipe["steps"]) if k in steps_map]
    new["outputs"] = [ref(r) for r in recipe["outputs"]]
    new["inputs"] = [s for k, s in enumerate(recipe["inputs"]) if k in in_map]
    if "in_axes" in recipe:
        new["in_axes"] = [a for k, a in enumerate(recipe["in_axes"]) if k in in_map]
    return new


def _simplify(recipe):
    """Smaller recipes, the most promising first."""
    if recipe["transform"] != "eager":
        yield {**recipe, "transform": "eager"}
        if recipe["transform"] != "jit":
            yield {**recipe, "transform": "jit"}
    if len(recipe["outputs"]) > 1:
        yield {**recipe, "outputs": recipe["outputs"][:1]}
    for k in range(len(recipe["steps"]) - 1):
        yield {**recipe, "outputs": [["v", k]]}
    live = _live_steps(recipe)
    used = {r[1] for k in live for r in recipe["steps"][k][1] if r[0] == "in"}
    used |= {r[1] for r in recipe["outputs"] if r[0] == "in"}
    if recipe["transform"] in GRAD_LIKE + ("scan", "while", "fori"):
        used.add(0)  # the first input is the one differentiated, or fed back
    if len(live) < len(recipe["steps"]) or len(used) < len(recipe["inputs"]):
        yield _renumber(recipe, live, used)


def shrink(recipe, bucket, run_one, budget=40):
    """A smaller recipe that still falls in ``bucket`` (greedy, at most ``budget`` runs)."""
    for _ in range(budget):
        for candidate in _simplify(recipe):
            if candidate == recipe:
                continue
            budget -= 1
            if run_one(candidate)[0] == bucket:
                recipe = candidate
                break
            if budget <= 0:
                return recipe
        else:
            return recipe
    return recipe


# -- the run --------------------------------------------------------------------------------------

class Summary:
    def __init__(self, seed, programs):
        self.seed, self.programs = seed, programs
        self.counts = {b: 0 for b in BUCKETS}
        self.failures = []  # (index, bucket, detail, recipe) of everything not ok/same-error
        self.seconds = 0.0
        self.planned = None

    def line(self):
        c = self.counts
        cut = (f" (stopped by --max-seconds: {self.planned} planned)"
               if self.planned is not None and self.planned > self.programs else "")
        return (f"fuzz seed={self.seed} programs={self.programs}{cut}: ok={c['ok']} "
                f"same-error={c['same-error']} crashes={c['crashes']} "
                f"wrong-values={c['wrong-values']} error-differs={c['error-differs']} "
                f"jaxpr-differs={c['jaxpr-differs']} message-differs={c['message-differs']} "
                f"jax-bug={c['jax-bug']} "
                f"seconds={self.seconds:.0f}")

    def failed(self):
        return any(self.counts[b] for b in FAILING)


def run(seed, programs, workers=2, indices=None, timeout=300, progress=None, recipes=None,
        on_failure=None, max_seconds=None):
    """Run the programs (``indices`` of the seed, or the given ``recipes``); a Summary. With
    ``max_seconds``, no program starts after that time (the summary counts those run)."""
    start = time.time()
    deadline = None if max_seconds is None else start + max_seconds
    if recipes is None:
        indices = list(range(programs)) if indices is None else list(indices)
        jobs = [(i, recipe_for(seed, i)) for i in indices]
    else:
        jobs = list(enumerate(recipes))
    summary = Summary(seed, len(jobs))
    lock = threading.Lock()

    def record(i, recipe, bucket, detail):
        with lock:
            summary.counts[bucket] += 1
            if bucket not in ("ok", "same-error", "jax-bug"):
                summary.failures.append((i, bucket, detail, recipe))
                if on_failure:
                    on_failure(i, bucket, detail, recipe)
            done = sum(summary.counts.values())
            if progress and (done % 100 == 0 or bucket in FAILING):
                progress(f"[{done}/{len(jobs)}] " + (f"program {i}: {bucket}" if bucket in
                                                     FAILING else summary.line()))

    if workers == 0:
        libs = load_libraries()
        for i, recipe in jobs:
            if deadline is not None and time.time() > deadline:
                break
            record(i, recipe, *check(recipe, libs))
    else:
        queue = list(reversed(jobs))

        def serve():
            w = Worker(timeout)
            try:
                while True:
                    with lock:
                        if not queue or (deadline is not None and time.time() > deadline):
                            return
                        i, recipe = queue.pop()
                    record(i, recipe, *w.run(recipe))
            finally:
                w.close()

        threads = [threading.Thread(target=serve) for _ in range(workers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    summary.failures.sort(key=lambda f: f[0])
    summary.seconds = time.time() - start
    summary.programs = sum(summary.counts.values())
    summary.planned = len(jobs)
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--programs", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2, help="0: run in this process")
    ap.add_argument("--timeout", type=float, default=300, help="seconds a program may take")
    ap.add_argument("--max-seconds", type=float,
                    help="start no program after this many seconds (the summary says so)")
    ap.add_argument("--first", type=int, default=0, help="index of the first program")
    ap.add_argument("--only", help="comma-separated program indices of the seed")
    ap.add_argument("--replay", help="a recipe as JSON (or @file) to run alone")
    ap.add_argument("--show-failures", action="store_true",
                    help="print each failure, shrunk, with its recipe")
    ap.add_argument("--failures-out", help="write the failures as JSON lines to this file")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        return worker_main()
    recipes = None
    if a.replay:
        text = open(a.replay[1:]).read() if a.replay.startswith("@") else a.replay
        recipes = [json.loads(text)]
    indices = ([int(i) for i in a.only.split(",")] if a.only
               else range(a.first, a.first + a.programs))
    out = open(a.failures_out, "w") if a.failures_out else None

    def on_failure(i, bucket, detail, recipe):  # written as found: a cut-short run keeps them
        if out:
            out.write(json.dumps({"index": i, "bucket": bucket, "detail": detail,
                                  "recipe": recipe}) + "\n")
            out.flush()

    summary = run(a.seed, len(indices) if indices is not None else a.programs, a.workers,
                  indices, a.timeout, progress=lambda s: print(s, flush=True), recipes=recipes,
                  on_failure=on_failure, max_seconds=a.max_seconds)
    if out:
        out.close()
    if a.show_failures and summary.failures:
        shrinker = Worker(a.timeout) if a.workers else None
        libs = None if shrinker else load_libraries()
        run_one = shrinker.run if shrinker else (lambda r: check(r, libs))
        for i, bucket, detail, recipe in summary.failures:
            small = shrink(recipe, bucket, run_one) if bucket != "message-differs" else recipe
            _, small_detail = run_one(small)
            print(f"\n== program {i}: {bucket}\n{fuzz_recipes.describe(small)}\n"
                  f"{small_detail or detail}\nrecipe: {json.dumps(small)}")
        if shrinker:
            shrinker.close()
    print(summary.line(), flush=True)
    return 1 if summary.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
