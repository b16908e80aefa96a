"""``python -m traxla inspect`` on a file it has never seen, and ``scan-vs-unrolled
--plot``."""
import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

from traxla.__main__ import main
from traxla.diagnostics import UnrolledLoopWarning

USER_CODE = textwrap.dedent("""
    import traxla.numpy as jnp

    def helper(x):
        return jnp.tanh(x)

    def model(x, W, steps=2):
        for _ in range(steps):
            x = helper(x @ W)
        return x.sum()
""")


@pytest.fixture
def user_file(tmp_path):
    path = tmp_path / "never_seen_before.py"
    path.write_text(USER_CODE)
    return str(path)


def test_inspect_jaxpr_loops_report(user_file, capsys):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert main(["inspect", f"{user_file}:model", "--args", "f32[4,8] f32[8, 8]",
                     "--static", "steps=40", "--stage", "jaxpr,loops,report"]) == 0
    # the loops stage describes the loop; no warning repeats it, the report only counts it
    assert not [w for w in rec if issubclass(w.category, UnrolledLoopWarning)]
    out = capsys.readouterr().out
    assert out.count("40 repetitions") == 1
    assert "unrolled loops: 1 (described above)" in out
    assert "== jaxpr (81 equations" in out
    assert "{ lambda ; a:f32[4,8] b:f32[8,8]. let" in out
    assert "reduce_sum" in out
    assert "== unrolled loops: 1" in out
    assert "40 repetitions of a 2-equation block [dot_general, tanh]" in out
    assert "Compile report for jit(model)" in out
    assert f"{user_file}:9" in out and f"{user_file}:5" in out   # attributed lines


def test_inspect_without_the_loops_stage_warns_once(user_file, capsys):
    with pytest.warns(UnrolledLoopWarning) as rec:
        assert main(["inspect", f"{user_file}:model", "--args", "f32[4,8] f32[8, 8]",
                     "--static", "steps=40", "--stage", "jaxpr,report"]) == 0
    loops = [w for w in rec if issubclass(w.category, UnrolledLoopWarning)]
    assert len(loops) == 1 and (loops[0].filename, loops[0].lineno) == (user_file, 9)
    assert "40 repetitions" not in capsys.readouterr().out


def test_inspect_as_a_module_prints_every_lowered_stage(user_file):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-m", "traxla", "inspect", f"{user_file}:model",
                           "--args", "f32[2,3] f32[3,3]", "--stage", "stablehlo,hlo,cost"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "module @jit_model" in out and "stablehlo.dot_general" in out
    assert f'loc("{user_file}":5:' in out       # ops point back at the user's lines
    assert "HloModule jit_model" in out
    assert "flops" in out


@pytest.mark.parametrize("argv, message", [
    (["--args", "f32[4,8] float[3]"], "unknown dtype 'float'"),
    (["--args", "f32[4,8] 3"], "could not read '3'"),
    (["--args", "f32[4,8] f32[8,8]", "--static", "steps"], "write NAME=VALUE"),
    (["--args", "f32[4,8] f32[8,8]", "--stage", "asm"], "unknown stage(s) ['asm']"),
])
def test_inspect_rejects_bad_input_clearly(user_file, capsys, argv, message):
    assert main(["inspect", f"{user_file}:model"] + argv) == 2
    assert message in capsys.readouterr().err


def test_inspect_missing_function(user_file, capsys):
    assert main(["inspect", f"{user_file}:nope", "--args", "f32[2]"]) == 2
    assert "has no 'nope'" in capsys.readouterr().err


def test_scan_vs_unrolled_plot(tmp_path, capsys):
    out_png = tmp_path / "out.png"
    assert main(["scan-vs-unrolled", "--steps", "4,8", "--plot", str(out_png)]) == 0
    out = capsys.readouterr().out
    assert "python for" in out and "lax.scan" in out
    if importlib.util.find_spec("matplotlib") is None:
        assert "matplotlib is not installed: no plot written" in out
        assert not out_png.exists()
    else:
        assert out_png.stat().st_size > 0
