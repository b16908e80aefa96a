"""Runs a test script in a fresh process with several CPU devices, under traxla or under
JAX (the script picks the library from its ``{lib}`` field), and returns the JSON object
it prints last. The device count is a process-wide XLA flag, so each script gets its own
process."""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parent.parent


def run_json_script(script: str, lib: str, devices: int) -> dict:
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
               TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    env.pop("TRAXLA_NUM_CPU_DEVICES", None)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(script.format(lib=lib))],
                          capture_output=True, text=True, timeout=300, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
