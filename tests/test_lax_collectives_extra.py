"""``all_to_all``, ``pswapaxes``, ``pshuffle`` and ``axis_size`` inside ``shard_map``, and
``with_sharding_constraint`` in a jitted program, on 8 CPU devices, against JAX: values, a gradient through ``pswapaxes``, error messages, and
the ``all_to_all`` equations as printed (each side runs in a fresh process, since the
device count is fixed when a backend starts)."""
import json
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("jax")
from _device_scripts import jax_output  # noqa: E402
_PROGRAM = os.path.join(os.path.dirname(__file__), "_collectives_extra_program.py")


def _run(which):
    def run():
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
        proc = subprocess.run([sys.executable, _PROGRAM, which], capture_output=True,
                              text=True, timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    # JAX's side is pinned: stored under a hash of the program (a new or edited one runs live)
    with open(_PROGRAM) as f:
        return jax_output("collectives_extra\n" + f.read(), run) if which == "jax" else run()


def _equations(jaxpr_text):
    """The body's all_to_all equations, without JAX's varying-axes annotations."""
    text = re.sub(r"\{V:\([^)]*\)\}", "", jaxpr_text)
    return re.findall(r"\w+:f32\[[\d,]*\] = all_to_all\[[^\]]*\] \w+", text)


def test_collectives_match_jax():
    want, got = _run("jax"), _run("traxla")
    assert got["vals"] == want["vals"]
    assert got["grad"] == want["grad"]
    assert got["err"] == want["err"]
    assert got["perm"] == want["perm"]
    assert _equations(got["jaxpr"]) == _equations(want["jaxpr"])
    assert len(_equations(want["jaxpr"])) == 3
    for key in ("wsc_jaxpr", "wsc", "wsc_grad", "wsc_text"):  # with_sharding_constraint
        assert got[key] == want[key], key
