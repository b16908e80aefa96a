"""Equations are located at the user's code (as JAX's ``loc(...)``): scripts, ``python -m``
modules and traxla's own demos; never at ``<frozen runpy>`` or traxla's internals."""
import os
import subprocess
import sys
import textwrap

import traxla
import traxla.numpy as jnp
from traxla.tracer import traces

PACKAGE_DIR = os.path.dirname(os.path.abspath(traxla.__file__))
ROOT = os.path.dirname(PACKAGE_DIR)

MODULE = textwrap.dedent("""\
    import traxla
    import traxla.numpy as jnp

    def f(x):
        return jnp.sin(x) * 2.0

    print(traxla.jit(f).lower(jnp.ones(3)).as_text(debug_info=True))
    """)


def test_a_module_run_with_dash_m_is_located_at_its_own_lines(tmp_path):
    (tmp_path / "user_module.py").write_text(MODULE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]))
    proc = subprocess.run([sys.executable, "-m", "user_module"], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    path = str(tmp_path / "user_module.py")
    assert f'loc("{path}":5:' in proc.stdout, proc.stdout
    assert "frozen" not in proc.stdout and "runpy" not in proc.stdout


def _traced_from(caller_file, fun_file):
    """The source of the equation of ``sin(x)`` written in ``fun_file``, traced by a caller
    whose code lives in ``caller_file``."""
    namespace = {"jnp": jnp, "traxla": traxla}
    exec(compile("def fun(x):\n    return jnp.sin(x)\n", fun_file, "exec"), namespace)
    exec(compile("def caller(x):\n    return traxla.make_jaxpr(fun)(x)\n", caller_file, "exec"),
         namespace)
    return namespace["caller"](jnp.ones(2)).jaxpr.eqns[0].source_info


def test_runpy_frames_are_never_the_users_frame():
    # traxla's internals called from the module runner: the runner is skipped too, and the
    # walk goes on to the first user frame (here this test's own).
    internal = os.path.join(PACKAGE_DIR, "internal_helper.py")
    assert _traced_from("<frozen runpy>", internal).file == __file__
    assert _traced_from(os.path.join(os.sep, "lib", "runpy.py"), internal).file == __file__
    # ... while a user frame above the runner is the one found.
    info = _traced_from("<frozen runpy>", "/home/user/script.py")
    assert (info.file, info.line) == ("/home/user/script.py", 2)


def test_traxla_demos_are_user_code():
    # `python -m traxla` and `python -m traxla scan-vs-unrolled` trace functions of these files
    for demo in ("__main__.py", os.path.join("cli", "bench.py")):
        info = _traced_from("<frozen runpy>", os.path.join(PACKAGE_DIR, demo))
        assert (info.file, info.line) == (os.path.join(PACKAGE_DIR, demo), 2)


def test_user_frame_skips_internal_frames():
    frame = sys._getframe()
    assert traces.user_frame(frame) is frame
