"""examples/mlp_training.py: the same training code converges under traxla and follows
JAX's loss curve step by step."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest

import traxla
import traxla.numpy as tnp

_PATH = pathlib.Path(__file__).resolve().parent.parent / "examples" / "mlp_training.py"
_spec = importlib.util.spec_from_file_location("mlp_training", _PATH)
mlp_training = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mlp_training)


@pytest.fixture(scope="module")
def traxla_run():
    return mlp_training.train(traxla, tnp)


def test_training_converges(traxla_run):
    losses, params = traxla_run
    assert losses.shape == (200,)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < 0.35 * losses[0]
    # full-batch gradient descent with a small step: the loss never goes up
    assert np.all(np.diff(losses) <= 1e-6 * losses[:-1])
    assert set(params) == {"w1", "b1", "w2", "b2"}
    assert all(isinstance(v, traxla.Array) for v in params.values())


def test_loss_curve_matches_jax(traxla_run):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    losses, params = traxla_run
    want, want_params = mlp_training.train(jax, jnp)
    np.testing.assert_allclose(losses, want, rtol=1e-4)
    for k in want_params:
        np.testing.assert_allclose(np.asarray(params[k]), np.asarray(want_params[k]),
                                   rtol=1e-3, atol=1e-5)


def test_update_is_one_compiled_program():
    # the jitted update stages grad into one jaxpr: no eager primitive per step
    x, y = mlp_training.make_data(n=16)
    params = mlp_training.init_params()

    def loss(p):
        h = tnp.tanh(x @ p["w1"] + p["b1"])
        return tnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)
    jaxpr = traxla.make_jaxpr(traxla.grad(loss))(params)
    names = {e.primitive.name for e in jaxpr.eqns}
    assert {"dot_general", "tanh", "transpose"} <= names
