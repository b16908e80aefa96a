"""Runs a test script in a fresh process with several CPU devices, under traxla or under
JAX (the script picks the library from its ``{lib}`` field), and returns the JSON object
it prints last. The device count is a process-wide XLA flag, so each script gets its own
process.

JAX's side is pinned (JAX 0.10.2), so its outputs are stored in
``tests/data/jax_script_outputs.json`` under a hash of the exact script and device count,
and the suite spends its time on traxla's side. A script that is new or edited has no
stored output and runs under JAX live; ``TRAXLA_STORE_JAX_OUTPUTS=1 python -m pytest
tests/test_X.py`` (without ``-n``) stores it."""
from __future__ import annotations

import ast
import hashlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

REPO = pathlib.Path(__file__).resolve().parent.parent
_STORED = REPO / "tests" / "data" / "jax_script_outputs.json"


_LOADED: dict = {}
# The keys each store was asked for in this process (for TRAXLA_STORE_JAX_OUTPUTS=prune).
USED: dict = {}


def _stored(store: pathlib.Path) -> dict:
    if store not in _LOADED:
        try:
            _LOADED[store] = json.loads(store.read_text())
        except FileNotFoundError:
            _LOADED[store] = {}
    return _LOADED[store]


def _write(store: pathlib.Path, stored: dict) -> None:
    if store == _STORED:
        text = json.dumps(stored, indent=0, sort_keys=True)
    else:  # one entry a line
        text = "{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(stored[k], sort_keys=True)}"
                                   for k in sorted(stored)) + "\n}"
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(text + "\n")


class JaxRanLive(UserWarning):
    """A stored JAX output was missing, so JAX ran in the test (slower; still correct)."""


def jax_output(key_text: str, run, store: pathlib.Path = _STORED):
    """JAX's stored output for ``key_text`` (a script and its settings) in ``store``, else
    ``run()`` (stored there when TRAXLA_STORE_JAX_OUTPUTS is set)."""
    key = hashlib.sha256(key_text.encode()).hexdigest()
    USED.setdefault(store, set()).add(key)
    stored = _stored(store)
    if key in stored:
        return stored[key]
    out = run()
    if not os.environ.get("TRAXLA_STORE_JAX_OUTPUTS"):
        # a stale store runs JAX live without failing: said, so that it gets re-stored
        warnings.warn(JaxRanLive(
            f"JAX's side ran live: {store.name} has no output stored for this code (edited "
            f"since it was stored). Store it: TRAXLA_STORE_JAX_OUTPUTS=1 python -m pytest "
            + ("<this test>" if store == _STORED else
               f"tests/{store.stem}.py (=prune for a whole module drops the stale entries)")),
            stacklevel=2)
    else:
        _LOADED.pop(store, None)
        stored = _stored(store)
        stored[key] = out
        _write(store, stored)
    return out


def prune_unused() -> list:
    """With ``TRAXLA_STORE_JAX_OUTPUTS=prune``, after a whole run of some test modules (every
    test, no ``-k``, no ``-n``; tests/conftest.py checks): each of their own stores
    (``tests/data/jax_stored/<module>.json``) keeps only the entries this run asked for, so
    an edited module's stale entries go. The shared store of the device scripts is left
    alone (other modules use it). Returns ``(store, removed count)`` pairs."""
    out = []
    for store, used in USED.items():
        if store == _STORED or not store.exists():
            continue
        _LOADED.pop(store, None)
        stored = _stored(store)
        stale = set(stored) - used
        if stale:
            _write(store, {k: v for k, v in stored.items() if k in used})
            out.append((store, len(stale)))
    return out


def script_env(devices: int | None = None) -> dict:
    """The environment of ``run_script``'s process."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    if devices is not None:
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    env.pop("TRAXLA_NUM_CPU_DEVICES", None)
    return env


def run_script(code: str, argv=(), devices: int | None = None) -> str:
    """The standard output of ``python -c code *argv`` (asserting it succeeded)."""
    env = script_env(devices)
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                          text=True, timeout=300, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


def run_json_script(script: str, lib: str, devices: int) -> dict:
    code = textwrap.dedent(script.format(lib=lib))

    def run():
        return json.loads(run_script(code, devices=devices).strip().splitlines()[-1])
    if lib == "jax":
        return jax_output(f"{devices}\n{code}", run)
    return run()


def jax_comparison(script: str, devices: int, names):
    """A module-scoped ``outputs`` fixture (the script's JSON under traxla and under JAX)
    and a test, parametrized over ``names``, that compares each named entry; a test module
    binds both: ``outputs, test_x_as_jax = jax_comparison(_SCRIPT, 2, _NAMES)``."""
    import pytest

    @pytest.fixture(scope="module")
    def outputs():
        return run_json_script(script, "traxla", devices), run_json_script(script, "jax", devices)

    @pytest.mark.parametrize("name", names)
    def test(outputs, name):
        ours, theirs = outputs
        assert ours[name] == theirs[name]
    return outputs, test


_BATCH_MAIN = r"""
import contextlib, io, json, sys, traceback
_request = json.loads(sys.stdin.read())
_prelude = {"__name__": "__main__"}
exec(compile(_request["prelude"], "<prelude>", "exec"), _prelude)
_results = []
for _body in _request["bodies"]:
    _ns, _buf, _err = dict(_prelude), io.StringIO(), None
    try:
        with contextlib.redirect_stdout(_buf):
            exec(compile(_body, "<string>", "exec"), _ns)
    except BaseException:  # the body's test reports it; the others still run
        _err = traceback.format_exc()
    _results.append({"stdout": _buf.getvalue(), "error": _err})
sys.__stdout__.write("\nBATCH " + json.dumps(_results) + "\n")
"""


def string_arguments(module_file: str, func_name: str) -> list:
    """The (dedented) string literal each call ``func_name("...")`` in a module passes first."""
    tree = ast.parse(pathlib.Path(module_file).read_text())
    return [textwrap.dedent(node.args[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == func_name and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


class ScriptBatch:
    """Scripts that share a prelude (and so a device count), run in ONE fresh process
    instead of one each: a fresh interpreter costs ~2 CPU-s before the script does anything.
    The prelude runs once; each body runs after it in a copy of its namespace, with its
    standard output captured, as ``python -c prelude+body`` would print it; an exception
    in one body is that body's failure alone (``stdout`` raises with its traceback). The
    bodies are every string literal the module passes to ``func_name`` (``string_arguments``),
    run together at the first request; a body not among them runs alone."""

    def __init__(self, module_file: str, func_name: str, prelude: str, env=None, cwd=None):
        self._module_file, self._func_name = module_file, func_name
        self._prelude, self._env, self._cwd = prelude, env, cwd
        self._results = None

    def _run(self, bodies) -> dict:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2") if self._env is None else self._env
        proc = subprocess.run([sys.executable, "-c", _BATCH_MAIN], capture_output=True,
                              text=True, timeout=600, env=env, cwd=self._cwd,
                              input=json.dumps({"prelude": self._prelude, "bodies": bodies}))
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("BATCH ")]
        assert proc.returncode == 0 and lines, proc.stderr[-4000:]
        return dict(zip(bodies, json.loads(lines[-1][len("BATCH "):])))

    def stdout(self, body: str) -> str:
        body = textwrap.dedent(body)
        if self._results is None:
            self._results = self._run(list(dict.fromkeys(
                string_arguments(self._module_file, self._func_name))))
        result = self._results.get(body) or self._run([body])[body]
        assert result["error"] is None, result["error"][-4000:]
        return result["stdout"]


_FORK_SERVER = r"""
import json, os, signal, sys, tempfile, time, traceback
_proto = os.fdopen(os.dup(1), "w")  # the replies
os.dup2(2, 1)  # (what the prelude itself prints goes with the server's standard error)
_request = json.loads(sys.stdin.readline())
sys.argv[1:] = _request["argv"]
_prelude = {"__name__": "__main__"}
exec(compile(_request["prelude"], "<string>", "exec"), _prelude)
_lines = _request["prelude"].count("\n")


def _start(body, argv):
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the script's process: a copy of the server just after the prelude
        code = 1
        try:
            os.dup2(out.fileno(), 1)
            os.dup2(err.fileno(), 2)
            if argv is not None:
                sys.argv[1:] = argv
            # (numbered as the lines of ``python -c prelude+script``)
            exec(compile("\n" * _lines + body, "<string>", "exec"), _prelude)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid, out, err


for _line in sys.stdin:
    _runs, _timeout = json.loads(_line)
    _started = [_start(body, argv) for body, argv in _runs]  # at once
    _end, _replies = time.monotonic() + _timeout, []
    for _pid, _out, _err in _started:
        _status, _note = None, ""
        while _status is None:
            _done, _raw = os.waitpid(_pid, os.WNOHANG)
            if _done:
                _status = os.waitstatus_to_exitcode(_raw)
            elif time.monotonic() > _end:
                os.kill(_pid, signal.SIGKILL)
                _status = os.waitstatus_to_exitcode(os.waitpid(_pid, 0)[1])
                _note = f" (killed after {_timeout} s)"
            else:
                time.sleep(0.005)
        with _out, _err:
            _out.seek(0)
            _err.seek(0)
            _replies.append({"stdout": _out.read().decode(errors="replace"),
                             "stderr": _err.read().decode(errors="replace"),
                             "status": _status, "note": _note})
    _proto.write(json.dumps(_replies) + "\n")
    _proto.flush()
"""


class ForkServer:
    """Scripts that share a prelude, each run as in a fresh process of its own, less the
    interpreter's start and the prelude's imports (~2 CPU-s a process here): one server
    process runs the prelude once, then forks a copy of itself for each script, which
    runs the script with its file descriptors 1 and 2 captured and exits. Each script so
    starts from the state just after the prelude, with nothing of the other scripts' (meshes
    set, caches, configuration); a crash or a non-zero exit is that script's failure alone.
    Scripts run when asked, so tests spread over xdist workers run only their own; the
    scripts of one ``run_all`` run at once (as concurrent processes). A script's lines are
    numbered (in tracebacks, JAX's source-location messages) as in ``python -c
    prelude+script``. The prelude must leave the process safe to fork: imports and
    settings only, no backend started (no device or array used), no threads of its own.
    ``argv``: what ``sys.argv[1:]`` holds (a run may give its own)."""

    def __init__(self, prelude: str, env=None, cwd=None, argv=()):
        self._prelude, self._env, self._cwd, self._argv = prelude, env, cwd, list(argv)
        self._proc = self._errfile = None

    def _start(self):
        import atexit
        import tempfile
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2") if self._env is None else self._env
        self._errfile = tempfile.TemporaryFile()
        self._proc = subprocess.Popen([sys.executable, "-c", _FORK_SERVER], env=env,
                                      cwd=self._cwd, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=self._errfile, text=True)
        self._send({"prelude": self._prelude, "argv": self._argv})
        atexit.register(self.close)

    def _send(self, obj):
        self._proc.stdin.write(json.dumps(obj) + "\n")
        self._proc.stdin.flush()

    def close(self):
        if self._proc is not None:
            self._proc.stdin.close()
            self._proc.wait(timeout=60)
            self._proc = None

    def run_all(self, runs, timeout: float = 300) -> list:
        """Runs ``(script, argv or None)`` pairs at once; for each, ``{"stdout", "stderr",
        "status", "note"}``."""
        if self._proc is None:
            self._start()
        try:
            self._send([[[textwrap.dedent(body), None if argv is None else list(argv)]
                         for body, argv in runs], timeout])
            line = self._proc.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:  # the server died (in its prelude, or killed)
            self._proc.wait(timeout=60)
            self._errfile.seek(0)
            err = self._errfile.read().decode(errors="replace")
            self._proc = None
            raise AssertionError(f"the fork server ended:\n{err[-4000:]}")
        return json.loads(line)

    def run(self, body: str, timeout: float = 300, argv=None) -> dict:
        return self.run_all([(body, argv)], timeout)[0]

    def stdout(self, body: str, timeout: float = 300, argv=None) -> str:
        """The script's standard output (asserting it exited with status 0)."""
        r = self.run(body, timeout, argv)
        assert r["status"] == 0, (r["stderr"][-4000:] +
                                  f"\n(exit status {r['status']}{r['note']})")
        return r["stdout"]
