"""Keras 3 with its JAX backend under the drop-in (``python -m traxla.as_jax``): import,
build a Sequential, a functional and a variable-length model, ``fit``, ``evaluate`` and
``predict``, with JAX's numbers. One subprocess; skipped when keras is not installed."""
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("keras") is None,
                                reason="keras is not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "data", "keras_small_models.py")

# The script's results under JAX 0.10.2 with keras 3.15.1 (another keras runs JAX live).
JAX_RESULTS_3_15_1 = {
    "seq_fit": [1.3228015899658203, 1.30899977684021], "seq_eval": 1.3012641668319702,
    "seq_pred": [0.2669864594936371, 0.7247616052627563, -0.5915155410766602],
    "fn_fit": [1.979894757270813, 1.7477079629898071, 1.1689918041229248, 1.0964716672897339],
    "fn_eval": [1.5794920921325684, 1.0399360656738281],
    "fn_pred": [0.04313872754573822, 0.10837537795305252, 1.1847115755081177,
                0.6528410911560059],
    "var_shape": "(None, None, 3)", "var_pred": [0.5066675543785095, 0.1354970932006836]}


def _run(args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               JAX_PLATFORMS="cpu", KERAS_BACKEND="jax")
    p = subprocess.run([sys.executable, *args, SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULTS ")]
    assert p.returncode == 0 and lines, p.stderr[-3000:]
    return json.loads(lines[-1][len("RESULTS "):])


def test_keras_models_build_fit_evaluate_predict_with_jax_numbers():
    got = _run(["-m", "traxla.as_jax"])
    version = importlib.metadata.version("keras")
    want = JAX_RESULTS_3_15_1 if version == "3.15.1" else _run([])
    assert got.keys() == want.keys()
    for k in want:
        if isinstance(want[k], str):
            assert got[k] == want[k], k
        else:
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
