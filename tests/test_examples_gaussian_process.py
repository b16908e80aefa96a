"""examples/gaussian_process.py: GP regression (cholesky + solve_triangular, marginal
likelihood minimized by gradient descent) fits under traxla and gives JAX's numbers."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp
import traxla.scipy.linalg as tsla

_PATH = pathlib.Path(__file__).resolve().parent.parent / "examples" / "gaussian_process.py"
_spec = importlib.util.spec_from_file_location("gaussian_process", _PATH)
gaussian_process = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gaussian_process)

STEPS = 60


@pytest.fixture(scope="module")
def traxla_run():
    return gaussian_process.fit(traxla, tnp, tsla, steps=STEPS)


def test_fit_lowers_the_negative_log_marginal_likelihood(traxla_run):
    losses = traxla_run["losses"]
    assert losses.shape == (STEPS,) and np.all(np.isfinite(losses))
    assert losses[-1] < losses[0] - 10
    x, y, x_test = gaussian_process.make_data()
    inside = np.abs(x_test) < 1.8
    truth = np.sin(3 * x_test) + 0.5 * x_test
    assert np.max(np.abs(traxla_run["mean"][inside] - truth[inside])) < 0.3
    assert np.all(traxla_run["std"] >= 0)


def test_numbers_match_jax(traxla_run, jax_side):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import jax.scipy.linalg as jsla
    # JAX's side stored, keyed also by the example's source
    want = jax_side(lambda: gaussian_process.fit(jax, jnp, jsla, steps=STEPS), key=_PATH.read_text())
    np.testing.assert_allclose(traxla_run["losses"], want["losses"], rtol=1e-5, atol=1e-5)
    for key in ("mean", "std", "log_length", "log_signal", "log_noise"):
        np.testing.assert_allclose(traxla_run[key], want[key], rtol=1e-4, atol=1e-5, err_msg=key)
