"""``default_device`` and ``jit(device=, backend=)`` on a device other than the default
(the CPU beside a TPU, or a second CPU device here), against JAX in separate processes,
since the device count is fixed when a backend starts."""
import os
import subprocess
import sys

import pytest
from _device_scripts import jax_output

PROGRAM = os.path.join(os.path.dirname(__file__), "_default_device_program.py")


def _run(which):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    out = subprocess.run([sys.executable, PROGRAM, which], capture_output=True, text=True,
                         env=env, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


@pytest.fixture(scope="module")
def both():
    # JAX's side is pinned: stored under a hash of the program (a new or edited one runs live)
    with open(PROGRAM, encoding="utf-8") as f:
        theirs = jax_output("default_device\n" + f.read(), lambda: _run("jax"))
    return theirs, _run("traxla")


def test_default_device_places_arrays_and_programs_as_jax(both):
    jax_lines, traxla_lines = both
    assert len(traxla_lines) == len(jax_lines)
    for j, t in zip(jax_lines, traxla_lines):
        assert t == j


def test_default_device_runs_on_the_named_device(both):
    _, lines = both
    assert lines[0] == "created [1] False [1] [1]"
    assert lines[1] == "eager [1] False [2.0, 2.0, 2.0]"
    assert lines[3].startswith("random [1]")
    assert lines[4] == "scalar [1] () 7"  # a 0-d array placed on another device keeps rank 0
