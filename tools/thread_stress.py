"""Many Python threads using traxla at once, every result checked against NumPy.

Each thread runs ``--iterations`` iterations, cycling through the work kinds of ``--mix``:

  newjit    jit of a new shape (trace, lower, compile: emission and compilation overlap)
  lower     ``jit(f).lower(x).as_text()`` of a new shape (MLIR emission and printing only)
  cached    a cached jit call
  eager     eager jnp operations
  jaxpr     make_jaxpr
  grad      grad of a jitted function
  vmap      vmap of a function with a dot
  scan      lax.scan inside jit
  callback  jit with pure_callback and debug.callback (host callbacks)
  x64       ``with enable_x64():`` in this thread only (thread-local configuration)

One run is one process; with ``--runs N`` each run is a child process, so a crash (a
signal) is counted instead of ending the tool. The last line is a summary:

  thread_stress: runs=10 crashes=0 errors=0 wrong=0 threads=8 iterations=2000 ...

Examples::

  python tools/thread_stress.py --runs 10 --threads 8 --iterations 2000
  python tools/thread_stress.py --runs 10 --threads 8 --iterations 300 --mix newjit
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import traxla  # noqa: E402
import traxla.numpy as jnp  # noqa: E402
from traxla import lax  # noqa: E402

KINDS = ("newjit", "lower", "cached", "eager", "jaxpr", "grad", "vmap", "scan", "callback",
         "x64")


class WrongResult(Exception):
    """A result that differs from NumPy's."""


def check(actual, expected, rtol=1e-5, atol=1e-6):
    actual = np.asarray(actual)
    if actual.shape != np.shape(expected) or not np.allclose(actual, expected, rtol, atol):
        raise WrongResult(f"got {actual!r}, expected {np.asarray(expected)!r}")


def _sin_affine(x):
    return jnp.sin(x) * 2.0 + 1.0


_cached = traxla.jit(lambda x, y: x @ y + 1.0)
_grad = traxla.grad(traxla.jit(lambda x: jnp.sum(jnp.tanh(x) ** 2)))
_vmapped = traxla.vmap(lambda m, v: jnp.tanh(m @ v), in_axes=(None, 0))
_scanned = traxla.jit(lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs))


def _host_sin(x):
    return np.sin(np.asarray(x)).astype(np.float32)


def _callback_program(x):
    traxla.debug.callback(lambda v: None, x)
    y = traxla.pure_callback(_host_sin, traxla.ShapeDtypeStruct(x.shape, x.dtype), x)
    return y * 3.0


_callback = traxla.jit(_callback_program)
_x64_program = traxla.jit(lambda x: x * 2 + 1)


class Worker:
    """One thread's work: ``step(i)`` runs iteration ``i``; raises on a wrong result."""

    def __init__(self, tid: int, kinds, seed_offset: int):
        self.tid = tid
        self.kinds = kinds
        self.rng = np.random.default_rng(tid + seed_offset)
        self.a = np.ones((3, 3), np.float32)
        self.b = np.arange(9, dtype=np.float32).reshape(3, 3)
        self.new_shape = 0

    def step(self, i: int):
        getattr(self, "do_" + self.kinds[(self.tid + i) % len(self.kinds)])(i)

    def _fresh_size(self):
        # a size no other thread uses: every call compiles a new program
        self.new_shape += 1
        return 1 + self.tid + 64 * self.new_shape

    def do_newjit(self, i):
        x = np.linspace(-1, 1, self._fresh_size(), dtype=np.float32)
        check(traxla.jit(_sin_affine)(x), np.sin(x) * 2 + 1)

    def do_lower(self, i):
        x = np.zeros((self._fresh_size(), 2), np.float32)
        text = traxla.jit(lambda v: jnp.cos(v) @ jnp.ones((2, 3), np.float32)).lower(x).as_text()
        if "stablehlo.cosine" not in text or "dot_general" not in text:
            raise WrongResult(text[:500])

    def do_cached(self, i):
        check(_cached(self.a, self.b), self.a @ self.b + 1.0)

    def do_eager(self, i):
        v = self.rng.standard_normal(5).astype(np.float32)
        out = jnp.where(jnp.asarray(v) > 0, jnp.exp(v), v * 3.0)
        check(out, np.where(v > 0, np.exp(v), v * 3))

    def do_jaxpr(self, i):
        text = str(traxla.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(np.zeros(3, np.float32)))
        if "sin" not in text or "mul" not in text:
            raise WrongResult(text)

    def do_grad(self, i):
        x = self.rng.standard_normal(4).astype(np.float32)
        t = np.tanh(x)
        check(_grad(x), 2 * t * (1 - t * t), rtol=1e-4)

    def do_vmap(self, i):
        m = self.rng.standard_normal((3, 3)).astype(np.float32)
        vs = self.rng.standard_normal((2, 3)).astype(np.float32)
        check(_vmapped(m, vs), np.tanh(vs @ m.T), rtol=1e-4, atol=1e-5)

    def do_scan(self, i):
        xs = self.rng.standard_normal(6).astype(np.float32)
        carry, ys = _scanned(xs)
        prefix = np.concatenate([[0.0], np.cumsum(xs)[:-1]]).astype(np.float32)
        check(carry, xs.sum(), rtol=1e-4, atol=1e-5)
        check(ys, prefix * xs, rtol=1e-4, atol=1e-5)

    def do_callback(self, i):
        x = self.rng.standard_normal(4).astype(np.float32)
        check(_callback(x), np.sin(x) * 3.0)

    def do_x64(self, i):
        # alternating threads inside and outside ``enable_x64``: each sees its own setting
        x = np.arange(3)
        if (self.tid + i) % 2:
            with traxla.enable_x64(True):
                out = _x64_program(x)
                expected = np.int64
        else:
            out = _x64_program(x)
            expected = np.int32
        if out.dtype != expected:
            raise WrongResult(f"dtype {out.dtype}, expected {np.dtype(expected)}")
        check(out, x * 2 + 1)


def run_once(n_threads: int, iterations: int, kinds, switch_interval: float, seed: int):
    """Runs the threads in this process; returns (wrong, errors, first failures)."""
    counts = {"wrong": 0, "errors": 0}
    failures: list = []
    lock = threading.Lock()
    barrier = threading.Barrier(n_threads)

    def body(tid):
        worker = Worker(tid, kinds, seed)
        barrier.wait()
        for i in range(iterations):
            try:
                worker.step(i)
            except Exception as e:  # noqa: BLE001 - counted and reported
                kind = "wrong" if isinstance(e, WrongResult) else "errors"
                with lock:
                    counts[kind] += 1
                    if len(failures) < 5:
                        failures.append(f"thread {tid} iteration {i}: {type(e).__name__}: {e}\n"
                                        + "".join(traceback.format_tb(e.__traceback__)[-3:]))

    old = sys.getswitchinterval()
    sys.setswitchinterval(switch_interval)  # threads interleave inside traces and lowerings
    try:
        threads = [threading.Thread(target=body, args=(t,)) for t in range(n_threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return counts["wrong"], counts["errors"], failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=2000, help="per thread")
    parser.add_argument("--mix", default=",".join(KINDS),
                        help=f"comma-separated work kinds, cycled (default: all of {KINDS})")
    parser.add_argument("--runs", type=int, default=1,
                        help="runs, each in a child process (a crash is counted)")
    parser.add_argument("--switch-interval", type=float, default=1e-5,
                        help="sys.setswitchinterval while the threads run (seconds)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    kinds = [k for k in args.mix.split(",") if k]
    unknown = set(kinds) - set(KINDS)
    if unknown:
        parser.error(f"unknown kinds {sorted(unknown)}; choose from {KINDS}")
    settings = (f"threads={args.threads} iterations={args.iterations} "
                f"mix={','.join(kinds)}")
    start = time.perf_counter()
    if args.child:
        wrong, errors, failures = run_once(args.threads, args.iterations, kinds,
                                           args.switch_interval, args.seed)
        for f in failures:
            print(f, file=sys.stderr)
        print(f"thread_stress-run: wrong={wrong} errors={errors}", flush=True)
        return 0 if not (wrong or errors) else 1
    crashes = wrong = errors = 0
    for run in range(args.runs):
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--threads",
               str(args.threads), "--iterations", str(args.iterations), "--mix", ",".join(kinds),
               "--switch-interval", str(args.switch_interval), "--seed", str(args.seed + run)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        line = next((ln for ln in proc.stdout.splitlines()
                     if ln.startswith("thread_stress-run:")), None)
        if line is None:  # died before reporting: a signal (SIGSEGV, SIGABRT) or an abort
            crashes += 1
            print(f"run {run}: CRASH (exit status {proc.returncode})\n{proc.stderr[-3000:]}",
                  file=sys.stderr)
            continue
        fields = dict(kv.split("=") for kv in line.split()[1:])
        wrong += int(fields["wrong"])
        errors += int(fields["errors"])
        if proc.returncode:
            print(f"run {run}: {line}\n{proc.stderr[-3000:]}", file=sys.stderr)
    seconds = time.perf_counter() - start
    print(f"thread_stress: runs={args.runs} crashes={crashes} errors={errors} wrong={wrong} "
          f"{settings} seconds={seconds:.1f}", flush=True)
    return 0 if not (crashes or wrong or errors) else 1


if __name__ == "__main__":
    sys.exit(main())
