"""examples/mnist_classifier.py: JAX's MNIST-style classifier ported by changing imports;
its prediction, loss, accuracy and jit-compiled SGD updates give JAX's numbers."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import _examples

import traxla

_PATH = _examples.EXAMPLES / "mnist_classifier.py"
_SOURCE = _PATH.read_text()

# the only difference between the traxla and the JAX version of the program
_JAX_IMPORTS = {
    "import traxla as jax": "import jax",
    "import traxla.numpy as jnp": "import jax.numpy as jnp",
    "from traxla import grad, jit": "from jax import grad, jit",
    "from traxla.scipy.special import logsumexp": "from jax.scipy.special import logsumexp",
}


def _load(source, name):
    return _examples.load(_PATH, source, name)


def _jax_source():
    return _examples.jax_source(_SOURCE, _JAX_IMPORTS)


@pytest.fixture(scope="module")
def programs():
    pytest.importorskip("jax")
    return _load(_SOURCE, "mnist_traxla"), _load(_jax_source(), "mnist_jax")


LAYERS = (784, 64, 32, 10)


def _data(module):
    images, labels, test_images, test_labels = module.synthetic_mnist(256, 128)
    params = module.init_random_params(0.1, list(LAYERS))
    return params, (images, labels), (test_images, test_labels)


def _jax_run(jax_side, run):
    """JAX's side, stored: keyed also by the example's source (the data are numpy's)."""
    return jax_side(run, key=_SOURCE + inspect.getsource(_examples))


def test_predict_loss_accuracy_match_jax(programs, jax_side):
    tx, jx = programs
    params, train, test = _data(tx)
    import jax

    def jax_outputs():  # on JAX's own copy of the (numpy) data
        j_params, j_train, _ = _data(jx)
        return [jax.jit(getattr(jx, n))(j_params, j_train[0] if n == "predict" else j_train)
                for n in ("predict", "loss", "accuracy")]
    wants = _jax_run(jax_side, jax_outputs)
    for fn_name, want in zip(("predict", "loss", "accuracy"), wants, strict=True):
        t_fn = getattr(tx, fn_name)
        batch = train[0] if fn_name == "predict" else train
        got_eager = np.asarray(t_fn(params, batch))
        got_jit = np.asarray(traxla.jit(t_fn)(params, batch))
        assert got_jit.dtype == want.dtype and got_jit.shape == want.shape, fn_name
        np.testing.assert_allclose(got_jit, want, rtol=2e-5, atol=2e-6, err_msg=fn_name)
        np.testing.assert_allclose(got_eager, want, rtol=2e-5, atol=2e-6, err_msg=fn_name)
    # predictions are log-probabilities: each row's logsumexp is 0
    logp = np.asarray(tx.predict(params, test[0]))
    np.testing.assert_allclose(np.log(np.exp(logp).sum(1)), 0.0, atol=1e-5)


def test_training_matches_jax(programs):
    tx, jx = programs
    kw = dict(layer_sizes=LAYERS, step_size=0.05, num_epochs=3, batch_size=64, num_train=512,
              num_test=256, verbose=False)
    t_params, t_hist = tx.main(**kw)
    j_params, j_hist = jx.main(**kw)  # (live: JAX's parameters would be a 1 MB record)
    np.testing.assert_allclose(np.array(t_hist), np.array(j_hist), rtol=2e-4, atol=2e-4)
    for (tw, tb), (jw, jb) in zip(t_params, j_params):
        assert isinstance(tw, traxla.Array)
        np.testing.assert_allclose(np.asarray(tw), np.asarray(jw), rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(np.asarray(tb), np.asarray(jb), rtol=1e-3, atol=1e-5)
    # the classifier learns the teacher: training loss falls and accuracy beats chance
    losses = [h[2] for h in t_hist]
    assert losses[-1] < losses[0]
    assert t_hist[-1][0] > 0.6 and t_hist[-1][1] > 0.5
